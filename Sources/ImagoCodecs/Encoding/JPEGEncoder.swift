import CTurboJPEG
import Foundation

/// Encodes JPEG with libjpeg-turbo. Colour images use 4:2:0 chroma
/// subsampling; gray images stay gray. Alpha is dropped (JPEG has none):
/// images with alpha are composited over white first, so that transparent
/// areas do not turn black.
public struct JPEGEncoder: ImageEncoding {
    /// Quality from 1 to 100.
    public var quality: Int
    /// What is written besides the pixels (EXIF, XMP, ICC, IPTC). Default: nothing.
    public var metadata: ImageMetadata

    /// Creates an encoder; `quality` is clamped to 1...100.
    public init(quality: Int = 80, metadata: ImageMetadata = ImageMetadata()) {
        self.quality = min(100, max(1, quality))
        self.metadata = metadata
    }

    public var format: ImageFormat { .jpeg }

    public func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        guard let handle = tjInitCompress() else { throw ImageEncodingError(format: .jpeg, detail: "TurboJPEG could not start") }
        defer { tjDestroy(handle) }
        let (pixels, pixelFormat, stride) = Self.opaquePixels(image)
        let isGray = pixelFormat == TJPF_GRAY.rawValue
        let subsampling = Int32(isGray ? TJSAMP_GRAY.rawValue : TJSAMP_420.rawValue)
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = pixels.withUnsafeBufferPointer { source in
            tjCompress2(
                handle, source.baseAddress, Int32(image.width), Int32(stride), Int32(image.height), pixelFormat,
                &output, &size, subsampling, Int32(quality), 0
            )
        }
        defer { tjFree(output) }
        guard status == 0, let output else {
            let message = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
            throw ImageEncodingError(format: .jpeg, detail: message)
        }
        return metadata.inserted(intoJPEG: Data(bytes: output, count: Int(size)))
    }

    /// The pixels in a layout TurboJPEG takes, alpha composited over white.
    private static func opaquePixels(_ image: Image) -> ([UInt8], Int32, Int) {
        switch image.pixelFormat {
        case .gray8: return (image.pixels, TJPF_GRAY.rawValue, image.bytesPerRow)
        case .rgb8: return (image.pixels, TJPF_RGB.rawValue, image.bytesPerRow)
        case .grayAlpha8, .rgba8:
            let channels = image.pixelFormat.bytesPerPixel
            let colorChannels = channels - 1
            var opaque = [UInt8](repeating: 0, count: image.width * image.height * colorChannels)
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let source = y * image.bytesPerRow + x * channels
                    let alpha = Int(image.pixels[source + colorChannels])
                    for channel in 0..<colorChannels {
                        let value = Int(image.pixels[source + channel])
                        opaque[(y * image.width + x) * colorChannels + channel] = UInt8((value * alpha + 255 * (255 - alpha)) / 255)
                    }
                }
            }
            return (opaque, colorChannels == 1 ? TJPF_GRAY.rawValue : TJPF_RGB.rawValue, image.width * colorChannels)
        }
    }
}
