import Foundation

extension ImageProcessors {
    /// Colour moved away from (factor above 1) or toward (below 1, 0 for
    /// gray) each pixel's perceived brightness, as thumbor's `saturation()`:
    /// p = √(0.299 r² + 0.587 g² + 0.114 b²), then each channel
    /// p + (c − p) × factor in single precision, truncated and clamped.
    /// Alpha is kept; a gray image becomes RGB, as thumbor's filters see it.
    public struct Saturation: ImageProcessing, Hashable {
        public var factor: Double

        public init(factor: Double) {
            self.factor = factor
        }

        public var identifier: String { "saturation(\(factor))" }

        public func process(_ image: Image) -> Image? {
            let factor = Float(self.factor)
            return image.mappingColors { red, green, blue in
                let (r, g, b) = (Double(red), Double(green), Double(blue))
                let p = Float((r * r * 0.299 + g * g * 0.587 + b * b * 0.114).squareRoot())
                func moved(_ value: UInt8) -> UInt8 {
                    let result = p + (Float(value) - p) * factor
                    return result.isFinite ? UInt8(min(max(Int(result), 0), 255)) : value
                }
                return (moved(red), moved(green), moved(blue))
            }
        }
    }

    /// Each colour channel's histogram spread over the whole range, as
    /// thumbor's `equalize()`: a value becomes (cdf(v) − m) / (n − m) × 255,
    /// truncated, where n is the pixel count and m the cumulative count
    /// at the lowest value present. As in thumbor, m is taken only for
    /// the channels whose lowest value is the lowest of all three (0 for
    /// the others), and a channel of one value (n = m) becomes 0. Alpha is
    /// kept; a gray image becomes RGB.
    public struct Equalize: ImageProcessing, Hashable {
        public init() {}

        public var identifier: String { "equalize" }

        public func process(_ image: Image) -> Image? {
            guard image.width > 0, image.height > 0 else { return image }
            var histograms = [[Int]](repeating: [Int](repeating: 0, count: 256), count: 3)
            image.forEachColor { red, green, blue in
                histograms[0][Int(red)] += 1
                histograms[1][Int(green)] += 1
                histograms[2][Int(blue)] += 1
            }
            let cumulative = histograms.map { histogram in
                var total = 0
                return histogram.map { count in
                    total += count
                    return count > 0 ? total : 0
                }
            }
            let lowest = cumulative.map { $0.firstIndex { $0 > 0 } ?? 256 }
            let first = lowest.min() ?? 256
            let minimums = (0..<3).map { lowest[$0] == first ? cumulative[$0][first] : 0 }
            let area = image.width * image.height
            let tables = (0..<3).map { channel in
                (0..<256).map { value -> UInt8 in
                    guard area > minimums[channel] else { return 0 }
                    let spread = (Float(cumulative[channel][value]) - Float(minimums[channel])) / Float(area - minimums[channel]) * 255
                    return UInt8(min(max(Int(spread), 0), 255))
                }
            }
            return image.mappingColors { red, green, blue in (tables[0][Int(red)], tables[1][Int(green)], tables[2][Int(blue)]) }
        }
    }
}

extension Image {
    /// The image in RGB (gray widened, as thumbor's filters see it) with
    /// each pixel's colour replaced by `transform` of it. Alpha is kept.
    func mappingColors(_ transform: (UInt8, UInt8, UInt8) -> (UInt8, UInt8, UInt8)) -> Image {
        let source = pixelFormat.bytesPerPixel <= 2 ? widened(addingColor: true, addingAlpha: false) : self
        let channels = source.pixelFormat.bytesPerPixel
        var pixels = source.pixels
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in 0..<source.height {
                var index = y * source.bytesPerRow
                for _ in 0..<source.width {
                    (buffer[index], buffer[index + 1], buffer[index + 2]) = transform(buffer[index], buffer[index + 1], buffer[index + 2])
                    index += channels
                }
            }
        }
        return Image(width: source.width, height: source.height, pixelFormat: source.pixelFormat, bytesPerRow: source.bytesPerRow, pixels: pixels)
            ?? source
    }

    /// Calls `body` with every pixel's colour (gray as three equal channels).
    func forEachColor(_ body: (UInt8, UInt8, UInt8) -> Void) {
        let channels = pixelFormat.bytesPerPixel
        let isGray = channels <= 2
        pixels.withUnsafeBufferPointer { buffer in
            for y in 0..<height {
                var index = y * bytesPerRow
                for _ in 0..<width {
                    if isGray { body(buffer[index], buffer[index], buffer[index]) } else { body(buffer[index], buffer[index + 1], buffer[index + 2]) }
                    index += channels
                }
            }
        }
    }
}
