import Foundation

extension ImageProcessors {
    /// Blocks of `size` x `size` pixels, each filled with the average of
    /// the pixels it covers (libvips' shrink then zoom, as imgproxy's
    /// pixelate does), aligned to the top-left corner. The blocks at the
    /// right and bottom edges may be partial: they average what they cover
    /// (imgproxy repeats the edge pixels to fill them instead).
    ///
    /// Colour is averaged weighted by alpha, as ``ImageResizer`` does, so
    /// that transparent pixels do not tint a block; averages are rounded to
    /// nearest. `size` larger than the image's longer side is clamped to
    /// it; `size` <= 1 (or an image of one pixel) returns the image itself.
    /// Otherwise the result has the image's format and no animation.
    public struct Pixelate: ImageProcessing, Hashable {
        /// The side of a block, in pixels.
        public var size: Int

        /// Creates a pixelation in blocks of `size` x `size` pixels.
        public init(size: Int) {
            self.size = size
        }

        /// `pixelate(size)`, the size as given (not clamped to an image).
        public var identifier: String { "pixelate(\(size))" }

        public func process(_ image: Image) -> Image? {
            let block = min(size, max(image.width, image.height))
            guard block > 1 else { return image }
            let (width, height) = (image.width, image.height)
            // Shrink: one pixel per block, the mean of its pixels.
            guard
                let means = ImageResizer.resample(
                    image, columns: Self.blocks(count: width, size: block), rows: Self.blocks(count: height, size: block))
            else { return image }
            // Zoom: each mean repeated over its block, one row of blocks at a time.
            let channels = image.pixelFormat.bytesPerPixel
            let rowBytes = width * channels
            let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { output, initialized in
                means.pixels.withUnsafeBufferPointer { source in
                    guard let source = source.baseAddress, let output = output.baseAddress else { return }
                    for blockRow in 0..<means.height {
                        let firstRow = blockRow * block
                        let row = output + firstRow * rowBytes
                        for blockColumn in 0..<means.width {
                            let mean = source + (blockRow * means.bytesPerRow + blockColumn * channels)
                            for column in (blockColumn * block)..<min(width, (blockColumn + 1) * block) {
                                (row + column * channels).initialize(from: mean, count: channels)
                            }
                        }
                        for copy in (firstRow + 1)..<min(height, firstRow + block) {
                            (output + copy * rowBytes).initialize(from: row, count: rowBytes)
                        }
                    }
                    initialized = rowBytes * height
                }
            }
            return Image(width: width, height: height, pixelFormat: image.pixelFormat, pixels: pixels)
        }

        /// One footprint per block of `size` pixels along `count`, equal
        /// weights summing to 1 over the pixels the block covers.
        static func blocks(count: Int, size: Int) -> [Footprint] {
            stride(from: 0, to: count, by: size).map { first in
                let covered = min(size, count - first)
                return Footprint(first: first, weights: [Float](repeating: 1 / Float(covered), count: covered))
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Pixelate {
    /// Pixelates in blocks of `size` x `size` pixels.
    public static func pixelate(size: Int) -> Self { ImageProcessors.Pixelate(size: size) }
}
