import Foundation

/// Encodes opaque images with one encoder and images with an alpha channel
/// with another: JPEG for photos, PNG where transparency must survive.
///
/// ```swift
/// let encoder = AlphaAwareEncoder(opaque: JPEGEncoder(quality: 80), alpha: PNGEncoder())
/// let bytes = try encoder.encode(image)
/// ```
public struct AlphaAwareEncoder: ImageEncoding {
    public let opaque: any ImageEncoding
    public let alpha: any ImageEncoding

    public init(opaque: any ImageEncoding, alpha: any ImageEncoding) {
        self.opaque = opaque
        self.alpha = alpha
    }

    /// The opaque encoder's format; an image with alpha comes out in ``alpha``'s.
    public var format: ImageFormat { opaque.format }

    public func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        try (image.pixelFormat.hasAlpha ? alpha : opaque).encode(image)
    }
}
