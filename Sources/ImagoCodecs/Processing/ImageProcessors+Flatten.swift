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
                        for index in 0..<width {
                            let pixel = from + index * sourceChannels
                            let alpha = Int(pixel[sourceChannels - 1])
                            let target = to + index * channels
                            if sourceChannels == 4 {
                                target[0] = Self.over(Int(pixel[0]), alpha, backdrop.0)
                                target[1] = Self.over(Int(pixel[1]), alpha, backdrop.1)
                                target[2] = Self.over(Int(pixel[2]), alpha, backdrop.2)
                            } else if isGray {
                                target[0] = Self.over(Int(pixel[0]), alpha, backdrop.0)
                            } else {
                                target[0] = Self.over(Int(pixel[0]), alpha, backdrop.0)
                                target[1] = Self.over(Int(pixel[0]), alpha, backdrop.1)
                                target[2] = Self.over(Int(pixel[0]), alpha, backdrop.2)
                            }
                        }
                    }
                    initialized = width * height * channels
                }
            }
            return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
        }

        /// `color` with `alpha` over an opaque `background`, all 0-255,
        /// rounded to nearest: the numerator is never halfway between two
        /// multiples of 255, so adding 127 rounds exactly.
        @inline(__always)
        static func over(_ color: Int, _ alpha: Int, _ background: Int) -> UInt8 {
            UInt8(truncatingIfNeeded: (color * alpha + background * (255 - alpha) + 127) / 255)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Flatten {
    /// Composites the image over an opaque `background`, removing alpha.
    public static func flatten(over background: Color) -> Self { ImageProcessors.Flatten(background: background) }
}
