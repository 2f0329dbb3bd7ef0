import Foundation

extension ImageProcessors {
    /// A nine-patch frame drawn over the image, as Android's nine-patch
    /// images define one and thumbor's `frame()` draws it
    /// (`thumbor/ext/filters/_nine_patch.c`). The patch's outer row and
    /// column of pixels are markers, opaque black where they mark: the top
    /// row and left column the columns and rows that stretch, the bottom
    /// row and right column the padding the image gets (the unmarked
    /// pixels before the first mark and after the last).
    ///
    /// The image is put on an opaque white canvas grown by the padding;
    /// then each cell of the patch, between marker changes, is stretched
    /// (bilinearly, as thumbor samples it) over its share of the canvas and
    /// composited over it: fixed cells at their size, stretching ones over
    /// what is left, in proportion. A cell that would not fit is left out.
    /// The result is RGBA, opaque.
    public struct NinePatch: ImageProcessing {
        /// The patch, as RGBA, markers included.
        public let patch: Image
        /// `ninePatch(WxH,digest)`, the digest of the patch's pixels (FNV-1a).
        public let identifier: String

        /// A frame of `patch`; nil if it is smaller than 3x3 pixels.
        public init?(patch: Image) {
            guard patch.width >= 3, patch.height >= 3 else { return nil }
            let rgba = patch.widened(addingColor: true, addingAlpha: true)
            guard rgba.pixelFormat == .rgba8 else { return nil }
            self.patch = rgba
            let digest = rgba.pixels.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
            identifier = "ninePatch(\(patch.width)x\(patch.height),\(String(digest, radix: 16)))"
        }

        /// The padding the bottom row and right column mark.
        public var padding: (left: Int, top: Int, right: Int, bottom: Int) {
            let (width, height) = (patch.width, patch.height)
            let bottomRow = (1..<(width - 1)).filter { isMark(x: $0, y: height - 1) }
            let rightColumn = (1..<(height - 1)).filter { isMark(x: width - 1, y: $0) }
            return (
                (bottomRow.first ?? 1) - 1, (rightColumn.first ?? 1) - 1, width - 2 - (bottomRow.last ?? (width - 2)),
                height - 2 - (rightColumn.last ?? (height - 2))
            )
        }

        public func process(_ image: Image) -> Image? {
            let padding = padding
            let size = ImageSize(width: image.width + padding.left + padding.right, height: image.height + padding.top + padding.bottom)
            guard let flat = Flatten(background: Color(red: 255, green: 255, blue: 255)).process(image),
                let canvas = Embed(size: size, x: padding.left, y: padding.top, background: Color(red: 255, green: 255, blue: 255)).process(flat)
            else { return nil }
            var target = canvas.widened(addingColor: true, addingAlpha: true)
            guard target.pixelFormat == .rgba8 else { return nil }
            let columns = spans(count: patch.width) { isMark(x: $0, y: 0) }
            let rows = spans(count: patch.height) { isMark(x: 0, y: $0) }
            var pixels = target.pixels
            var targetY = 0
            for row in rows {
                let height = row.stretches ? share(row.length, of: rows, available: target.height) : row.length
                var targetX = 0
                for column in columns {
                    let width = column.stretches ? share(column.length, of: columns, available: target.width) : column.length
                    paste(
                        from: (column.start, row.start, column.length, row.length), into: &pixels, width: target.width, height: target.height,
                        at: (targetX, targetY, width, height))
                    targetX += width
                }
                targetY += height
            }
            target = Image(width: target.width, height: target.height, pixelFormat: .rgba8, pixels: pixels) ?? target
            return target
        }

        /// Whether the patch's pixel at (x, y) is opaque black: a marker.
        private func isMark(x: Int, y: Int) -> Bool {
            let index = y * patch.bytesPerRow + x * 4
            return patch.pixels[index] == 0 && patch.pixels[index + 1] == 0 && patch.pixels[index + 2] == 0 && patch.pixels[index + 3] == 255
        }

        /// The runs of equally marked pixels between the markers, inside
        /// the marker border.
        private func spans(count: Int, isMarked: (Int) -> Bool) -> [(start: Int, length: Int, stretches: Bool)] {
            var spans: [(start: Int, length: Int, stretches: Bool)] = []
            var start = 1
            while start < count - 1 {
                let stretches = isMarked(start)
                var end = start + 1
                while end < count - 1, isMarked(end) == stretches { end += 1 }
                spans.append((start, end - start, stretches))
                start = end
            }
            return spans
        }

        /// A stretching span's share of what the fixed spans leave of `available`, rounded half up.
        private func share(_ length: Int, of spans: [(start: Int, length: Int, stretches: Bool)], available: Int) -> Int {
            let stretching = spans.filter(\.stretches).reduce(0) { $0 + $1.length }
            let fixed = spans.filter { !$0.stretches }.reduce(0) { $0 + $1.length }
            return Int(Double(length) / Double(stretching) * Double(max(0, available - fixed)) + 0.5)
        }

        /// The patch's region `source` stretched over the target's region
        /// `destination` and composited over it; nothing when it does not fit.
        private func paste(
            from source: (x: Int, y: Int, width: Int, height: Int), into pixels: inout [UInt8], width: Int, height: Int,
            at destination: (x: Int, y: Int, width: Int, height: Int)
        ) {
            guard destination.x + destination.width <= width, destination.y + destination.height <= height else { return }
            let xRatio = Double(source.width - 1) / Double(destination.width)
            let yRatio = Double(source.height - 1) / Double(destination.height)
            for y in 0..<destination.height {
                let sourceY = Int(yRatio * Double(y))
                let yFraction = yRatio * Double(y) - Double(sourceY)
                for x in 0..<destination.width {
                    let sourceX = Int(xRatio * Double(x))
                    let xFraction = xRatio * Double(x) - Double(sourceX)
                    let point = (source.x + sourceX, source.y + sourceY)
                    let opacity = Double(sample(point, xFraction, yFraction, channel: 3)) / 255
                    let target = ((destination.y + y) * width + destination.x + x) * 4
                    let targetOpacity = Double(pixels[target + 3]) / 255
                    for channel in 0..<3 {
                        let value = Double(sample(point, xFraction, yFraction, channel: channel))
                        let blended = opacity * value + targetOpacity * Double(pixels[target + channel]) * (1 - opacity)
                        pixels[target + channel] = UInt8(min(max(blended, 0), 255))
                    }
                }
            }
        }

        /// A channel at `point`, mixed with its right, lower and lower-right
        /// neighbours by the fractions (unmixed when the four agree).
        private func sample(_ point: (x: Int, y: Int), _ xFraction: Double, _ yFraction: Double, channel: Int) -> Int {
            func value(_ x: Int, _ y: Int) -> Int { Int(patch.pixels[y * patch.bytesPerRow + x * 4 + channel]) }
            let (a, b, c, d) = (value(point.x, point.y), value(point.x + 1, point.y), value(point.x, point.y + 1), value(point.x + 1, point.y + 1))
            if a == b, a == c, a == d { return a }
            let mixed =
                Double(a) * (1 - xFraction) * (1 - yFraction) + Double(b) * xFraction * (1 - yFraction) + Double(c) * (1 - xFraction) * yFraction
                + Double(d) * xFraction * yFraction
            return Int(min(max(mixed, 0), 255))
        }
    }
}
