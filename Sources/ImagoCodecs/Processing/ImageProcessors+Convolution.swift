import Foundation

extension ImageProcessors {
    /// The image convolved with a kernel of odd width and height, as
    /// thumbor's `convolution()`: each channel (alpha too) the weighted sum
    /// of its neighbourhood, the edge pixels repeated beyond the border,
    /// truncated toward zero and clamped; with `normalizes`, the weights
    /// divided by their sum (unless it is 0). A gray image becomes RGB.
    public struct Convolution: ImageProcessing, Hashable {
        /// The weights, row by row.
        public let weights: [Double]
        public let columns: Int
        public let normalizes: Bool

        /// Nil unless `weights` fill rows of `columns` and both the columns
        /// and the rows are odd in number.
        public init?(weights: [Double], columns: Int, normalizes: Bool) {
            guard columns > 0, !weights.isEmpty, weights.count % columns == 0, columns % 2 == 1, (weights.count / columns) % 2 == 1,
                weights.allSatisfy(\.isFinite)
            else { return nil }
            self.weights = weights
            self.columns = columns
            self.normalizes = normalizes
        }

        public var identifier: String { "convolution(\(weights.map { String($0) }.joined(separator: ";")),\(columns),\(normalizes))" }

        public func process(_ image: Image) -> Image? {
            let source = image.pixelFormat.bytesPerPixel <= 2 ? image.widened(addingColor: true, addingAlpha: false) : image
            let sum = weights.reduce(0, +)
            let kernel = normalizes && sum != 0 ? weights.map { $0 / sum } : weights
            let rows = kernel.count / columns
            let (width, height) = (source.width, source.height)
            let channels = source.pixelFormat.bytesPerPixel
            // Each kernel row's source row, clamped, for every output row: no bounds checks inside.
            let columnOffsets = (0..<width).map { x in (0..<columns).map { min(max(x + $0 - columns / 2, 0), width - 1) * channels } }
            let pixels = [UInt8](unsafeUninitializedCapacity: width * height * channels) { output, initialized in
                source.pixels.withUnsafeBufferPointer { input in
                    var sums = [Double](repeating: 0, count: channels)
                    for y in 0..<height {
                        let sourceRows = (0..<rows).map { min(max(y + $0 - rows / 2, 0), height - 1) * source.bytesPerRow }
                        for x in 0..<width {
                            for channel in 0..<channels { sums[channel] = 0 }
                            for row in 0..<rows {
                                for column in 0..<columns {
                                    let weight = kernel[row * columns + column]
                                    let index = sourceRows[row] + columnOffsets[x][column]
                                    for channel in 0..<channels { sums[channel] += Double(input[index + channel]) * weight }
                                }
                            }
                            let target = (y * width + x) * channels
                            for channel in 0..<channels {
                                let value = sums[channel]
                                output[target + channel] = value >= 255 ? 255 : value <= 0 ? 0 : UInt8(value)
                            }
                        }
                    }
                }
                initialized = width * height * channels
            }
            return Image(width: width, height: height, pixelFormat: source.pixelFormat, pixels: pixels)
        }
    }
}
