import CWebP
import Foundation

/// Encodes WebP with libwebp, lossy (the default, good for photos and
/// thumbnails) or lossless, keeping alpha. Gray images are written as RGB,
/// which WebP stores as compactly.
public struct WebPEncoder: ImageEncoding {
    /// Quality from 0 to 100 for lossy encoding.
    public var quality: Float
    /// Whether every pixel is kept exactly.
    public var isLossless: Bool
    /// What is written besides the pixels (EXIF, XMP, ICC; WebP has no
    /// place for IPTC). Default: nothing.
    public var metadata: ImageMetadata

    /// Creates an encoder; `quality` is clamped to 0...100.
    public init(quality: Float = 80, lossless: Bool = false, metadata: ImageMetadata = ImageMetadata()) {
        self.quality = min(100, max(0, quality))
        self.isLossless = lossless
        self.metadata = metadata
    }

    public var format: ImageFormat { .webp }

    public func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        guard image.width <= Int(WEBP_MAX_DIMENSION), image.height <= Int(WEBP_MAX_DIMENSION) else {
            throw ImageEncodingError(format: .webp, detail: "\(image.width)x\(image.height) is over WebP's \(WEBP_MAX_DIMENSION) pixels a side")
        }
        let color = image.colorPixels()
        let hasAlpha = image.pixelFormat.hasAlpha
        var output: UnsafeMutablePointer<UInt8>?
        let size = color.pixels.withUnsafeBufferPointer { pixels -> Int in
            let (width, height, stride) = (Int32(image.width), Int32(image.height), Int32(color.bytesPerRow))
            switch (hasAlpha, isLossless) {
            case (true, true): return WebPEncodeLosslessRGBA(pixels.baseAddress, width, height, stride, &output)
            case (true, false): return WebPEncodeRGBA(pixels.baseAddress, width, height, stride, quality, &output)
            case (false, true): return WebPEncodeLosslessRGB(pixels.baseAddress, width, height, stride, &output)
            case (false, false): return WebPEncodeRGB(pixels.baseAddress, width, height, stride, quality, &output)
            }
        }
        defer { WebPFree(output) }
        guard size > 0, let output else { throw ImageEncodingError(format: .webp, detail: "libwebp could not encode the image") }
        return try metadata.inserted(intoWebP: Data(bytes: output, count: size))
    }
}
