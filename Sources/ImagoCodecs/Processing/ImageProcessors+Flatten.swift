import Foundation

extension ImageProcessors {
    /// Alpha composited over an opaque `background` (its own alpha is
    /// ignored), leaving no alpha channel: for output formats without
    /// transparency (JPEG), or a chosen colour behind a logo.
    ///
    /// Each channel is `(c * a + b * (255 - a)) / 255`, rounded to the
    /// nearest integer (it is never exactly halfway), for the pixel's
    /// colour `c`, alpha `a` and the background's `b`. The result is gray8
    /// when the image is gray and the background a gray (red, green and
    /// blue equal), rgb8 otherwise, with no animation (one frame is
    /// flattened). An image without alpha is returned as is.
    public struct Flatten: ImageProcessing, Hashable {
        /// The colour behind the image; its alpha is ignored.
        public var background: Color

        /// Creates a flattening over `background`.
        public init(background: Color) {
            self.background = background
        }

        /// `flatten(#rrggbb)`: the background's alpha is left out, as it changes nothing.
        public var identifier: String {
            "flatten(\(Color(red: background.red, green: background.green, blue: background.blue)))"
        }

        public func process(_ image: Image) -> Image? {
            guard image.pixelFormat.hasAlpha else { return image }
            let isGray = image.pixelFormat == .grayAlpha8 && background.isGray
            let format: Image.PixelFormat = isGray ? .gray8 : .rgb8
            let channels = format.bytesPerPixel
            let sourceChannels = image.pixelFormat.bytesPerPixel
            let (width, height) = (image.width, image.height)
            let backdrop = (Int(background.red), Int(background.green), Int(background.blue))
            let pixels = [UInt8](unsafeUninitializedCapacity: width * height * channels) { output, initialized in
                image.pixels.withUnsafeBufferPointer { source in
                    guard let source = source.baseAddress, let output = output.baseAddress else { return }
                    for row in 0..<height {
                        let from = source + row * image.bytesPerRow
                        let to = output + row * width * channels
                        // A loop per layout, with constant channel counts.
                        switch (sourceChannels, channels) {
                        case (4, _): Self.flatten(from, into: to, count: width, from: 4, to: 3, backdrop)
                        case (_, 1): Self.flatten(from, into: to, count: width, from: 2, to: 1, backdrop)
                        default: Self.flatten(from, into: to, count: width, from: 2, to: 3, backdrop)
                        }
                    }
                    initialized = width * height * channels
                }
            }
            return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
        }

        /// Flattens `count` pixels of `from` channels (colour or gray, then
        /// alpha) into `to` channels (gray, or RGB: a gray source spread).
        @inline(__always)
        private static func flatten(
            _ source: UnsafePointer<UInt8>, into target: UnsafeMutablePointer<UInt8>, count: Int, from: Int, to: Int,
            _ backdrop: (Int, Int, Int)
        ) {
            for index in 0..<count {
                let pixel = source + index * from
                let output = target + index * to
                let alpha = Int(pixel[from - 1])
                output[0] = over(Int(pixel[0]), alpha, backdrop.0)
                if to == 3 {
                    output[1] = over(Int(pixel[from == 4 ? 1 : 0]), alpha, backdrop.1)
                    output[2] = over(Int(pixel[from == 4 ? 2 : 0]), alpha, backdrop.2)
                }
            }
        }

        /// `color` with `alpha` over an opaque `background`, all 0-255,
        /// rounded to nearest: the numerator is never halfway between two
        /// multiples of 255, so adding 127 rounds exactly. The division is
        /// `(v + 1 + v >> 8) >> 8`, exact for v below 65,535 (here at most
        /// 65,152), which vectorises where a division does not.
        @inline(__always)
        static func over(_ color: Int, _ alpha: Int, _ background: Int) -> UInt8 {
            let value = UInt32(truncatingIfNeeded: color * alpha + background * (255 - alpha) + 127)
            return UInt8(truncatingIfNeeded: (value &+ 1 &+ (value &>> 8)) &>> 8)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Flatten {
    /// Composites the image over an opaque `background`, removing alpha.
    public static func flatten(over background: Color) -> Self { ImageProcessors.Flatten(background: background) }
}
