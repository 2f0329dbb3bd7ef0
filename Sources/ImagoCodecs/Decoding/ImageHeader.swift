import Foundation

/// What an image's header says, read without decoding it: for planning a
/// decode (how far it may be scaled down while decoding) before paying for it.
public struct ImageHeader: Sendable, Equatable {
    /// The format the data sniffs as.
    public var format: ImageFormat
    /// The size as stored (a TIFF's first page, an ICO's largest image, an
    /// AVIF's cropped and turned as its container says, an SVG's intrinsic
    /// size, which it may be rendered larger than); nil for a format whose
    /// header is not read here (HEIC, JPEG XL) or a header that does not
    /// parse.
    public var storedSize: ImageSize?
    /// How the stored image is turned to be shown upright (JPEG and WebP
    /// EXIF, a TIFF's orientation tag; `.up` for the others, whose decoders
    /// turn them as they decode).
    public var orientation: ImageOrientation
    /// The number of frames, for GIF, WebP and AVIF (1 for a still image);
    /// nil for a format whose frames are not counted here.
    public var frameCount: Int?

    /// Reads `data`'s header.
    public init(_ data: Data) {
        format = ImageFormat(sniffing: data)
        if format == .avif, let avif = Self.declaredAVIF(data) {
            (storedSize, frameCount) = (avif.size, avif.frames)
        } else {
            storedSize = ImageDecodingOptions.declaredSize(of: data)
            frameCount = Self.declaredFrameCount(of: data, format: format)
        }
        switch format {
        case .jpeg: orientation = ImageOrientation(jpeg: data)
        case .webp: orientation = ImageOrientation(webp: data)
        case .tiff: orientation = ImageOrientation(tiff: data)
        default: orientation = .up
        }
    }

    /// The size once turned upright, as decoders return the image.
    public var uprightSize: ImageSize? { orientation.swapsDimensions ? storedSize?.transposed : storedSize }
}
