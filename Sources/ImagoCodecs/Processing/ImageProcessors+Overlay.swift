import Foundation

extension ImageProcessors {
    /// `overlay` drawn over the image (a watermark, a badge) with its
    /// top-left corner at (`x`, `y`), its alpha multiplied by `opacity`,
    /// composited with Porter-Duff "over" on straight-alpha sRGB bytes.
    ///
    /// ```swift
    /// let marked = ImageProcessors.Overlay(logo, named: "logo-v2", x: 16, y: 16, opacity: 0.5).process(photo)
    /// ```
    ///
    /// The overlay may lie partly or wholly outside the image: only the
    /// part over it is drawn. With `repeating`, it is tiled over the whole
    /// image, the tile grid through (`x`, `y`) and extending in every
    /// direction. Channels are rounded to nearest (halves up).
    ///
    /// The result keeps the image's alpha channel or its absence (an
    /// opaque image stays opaque) and becomes colour when the image is
    /// gray and the overlay is colour (rgb8 or rgba8); it has no animation
    /// (one frame is drawn on). The image itself when nothing is drawn:
    /// `opacity` 0 or below (or NaN), or an overlay wholly outside.
    public struct Overlay: ImageProcessing {
        /// The image drawn on top.
        public var overlay: Image
        /// What identifies `overlay` in ``identifier``, which is a cache
        /// key: give different overlays different names.
        public var name: String
        /// The overlay's left edge on the image, in pixels.
        public var x: Int
        /// The overlay's top edge on the image, in pixels.
        public var y: Int
        /// The factor on the overlay's alpha, 0...1 (values outside are clamped).
        public var opacity: Double
        /// Whether the overlay is tiled over the whole image.
        public var repeating: Bool

        /// Creates an overlay of `overlay`, called `name` in ``identifier``.
        public init(_ overlay: Image, named name: String, x: Int, y: Int, opacity: Double = 1, repeating: Bool = false) {
            self.overlay = overlay
            self.name = name
            self.x = x
            self.y = y
            self.opacity = opacity
            self.repeating = repeating
        }

        /// `overlay(<name's UTF-8 length>:<name>,WxH,x,y,opacity[,repeating])`:
        /// the name is length-prefixed, so no name can pass for another's
        /// fields; the overlay's size guards against a reused name.
        public var identifier: String {
            "overlay(\(name.utf8.count):\(name),\(overlay.size),\(x),\(y),\(opacity)\(repeating ? ",repeating" : ""))"
        }

        public func process(_ image: Image) -> Image? {
            let opacity = Float(opacity.isNaN ? 0 : min(1, max(0, opacity)))
            guard opacity > 0 else { return image }
            let (width, height) = (image.width, image.height)
            let (tileWidth, tileHeight) = (overlay.width, overlay.height)
            // The image's columns and rows drawn on, and the overlay column
            // and row drawn at the first of them.
            let columns: Range<Int>
            let rows: Range<Int>
            let (firstColumn, firstRow): (Int, Int)
            if repeating {
                columns = 0..<width
                rows = 0..<height
                // The remainders first: x and y may be anything, even Int.min.
                firstColumn = (tileWidth - x % tileWidth) % tileWidth
                firstRow = (tileHeight - y % tileHeight) % tileHeight
            } else {
                guard x < width, x > -tileWidth, y < height, y > -tileHeight else { return image }
                columns = max(0, x)..<min(width, x + tileWidth)
                rows = max(0, y)..<min(height, y + tileHeight)
                (firstColumn, firstRow) = (columns.lowerBound - x, rows.lowerBound - y)
            }

            // The result: the image's pixels, colour added for a colour
            // overlay, copied into rows without padding, then drawn on.
            let color = overlay.pixelFormat.hasColor
            let format = image.pixelFormat.adding(color: color, alpha: false)
            let rowBytes = width * format.bytesPerPixel
            // The overlay in the result's colours, with alpha: gray and alpha, or RGBA.
            let top = overlay.widened(addingColor: format.hasColor, addingAlpha: true)
            let span = Span(count: columns.count, firstColumn: firstColumn, tileWidth: tileWidth, scale: opacity / 255)
            let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { output, initialized in
                image.pixels.withUnsafeBufferPointer { source in
                    top.pixels.withUnsafeBufferPointer { overlayPixels in
                        guard let output = output.baseAddress, let source = source.baseAddress, let overlayPixels = overlayPixels.baseAddress
                        else { return }
                        for row in 0..<height {
                            image.pixelFormat.widen(
                                source + row * image.bytesPerRow, into: output + row * rowBytes, count: width, addingColor: color, addingAlpha: false)
                        }
                        for (index, row) in rows.enumerated() {
                            let into = output + (row * rowBytes + columns.lowerBound * format.bytesPerPixel)
                            let from = overlayPixels + (firstRow + index) % tileHeight * top.bytesPerRow
                            switch (format.hasColor, format.hasAlpha) {
                            case (false, false): span.draw(from, into: into, colors: 1, alpha: false)
                            case (false, true): span.draw(from, into: into, colors: 1, alpha: true)
                            case (true, false): span.draw(from, into: into, colors: 3, alpha: false)
                            case (true, true): span.draw(from, into: into, colors: 3, alpha: true)
                            }
                        }
                        initialized = rowBytes * height
                    }
                }
            }
            return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
        }

        /// One row's run of overlay pixels drawn over the image: `count`
        /// pixels from overlay column `firstColumn`, wrapping at `tileWidth`.
        private struct Span {
            var count: Int
            var firstColumn: Int
            var tileWidth: Int
            /// Opacity over 255: an overlay alpha byte times this is its coverage.
            var scale: Float

            /// Draws over `target` (pixels of `colors` channels, and alpha
            /// when `alpha`) from the overlay row at `source` (`colors` + 1 channels).
            @inline(__always)
            func draw(_ source: UnsafePointer<UInt8>, into target: UnsafeMutablePointer<UInt8>, colors: Int, alpha: Bool) {
                let sourceChannels = colors + 1
                let targetChannels = alpha ? colors + 1 : colors
                // Runs of consecutive overlay columns: to the tile's right edge, then whole tiles.
                var (index, column) = (0, firstColumn)
                while index < count {
                    let run = min(count - index, tileWidth - column)
                    let from = source + column * sourceChannels
                    let to = target + index * targetChannels
                    for pixel in 0..<run {
                        let over = from + pixel * sourceChannels
                        let under = to + pixel * targetChannels
                        let coverage = Float(over[colors]) * scale
                        if alpha {
                            guard coverage > 0 else { continue }
                            // Straight alpha: the colours are weighted by
                            // their alphas, and the sum divided by the result's.
                            let below = Float(under[colors]) / 255 * (1 - coverage)
                            let total = coverage + below
                            for channel in 0..<colors {
                                under[channel] = ImageResizer.roundedByte(
                                    (Float(over[channel]) * coverage + Float(under[channel]) * below) / total)
                            }
                            under[colors] = ImageResizer.roundedByte(total * 255)
                        } else {
                            // No branch on coverage: 0 gives back each byte exactly.
                            for channel in 0..<colors {
                                let below = Float(under[channel])
                                under[channel] = ImageResizer.roundedByte(below + (Float(over[channel]) - below) * coverage)
                            }
                        }
                    }
                    index += run
                    column = 0
                }
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Overlay {
    /// Draws `overlay` (called `name` in the identifier) at (`x`, `y`), its alpha times `opacity`; `repeating` tiles it.
    public static func overlay(
        _ overlay: Image, named name: String, x: Int = 0, y: Int = 0, opacity: Double = 1, repeating: Bool = false
    ) -> Self {
        ImageProcessors.Overlay(overlay, named: name, x: x, y: y, opacity: opacity, repeating: repeating)
    }
}
