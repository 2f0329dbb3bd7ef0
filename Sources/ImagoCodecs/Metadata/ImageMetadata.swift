import Foundation

/// What an image file says about its pixels besides the pixels: EXIF, XMP,
/// IPTC and its ICC colour profile, as raw blocks. Read from encoded bytes
/// without decoding them; written by the encoders that take it.
///
/// ```swift
/// let metadata = ImageMetadata(reading: source).keepingCopyrightOnly()
/// let bytes = try JPEGEncoder(quality: 80, metadata: metadata).encode(thumbnail)
/// ```
public struct ImageMetadata: Sendable, Hashable {
    /// The EXIF block: a TIFF structure from its byte-order mark.
    public var exif: Data?
    /// The XMP packet.
    public var xmp: Data?
    /// Photoshop image resources holding IPTC-IIM metadata (a JPEG's APP13
    /// segment after its signature); only JPEG output carries them.
    public var iptc: Data?
    /// The ICC colour profile.
    public var iccProfile: Data?

    /// Blocks larger than this are not read: 1 MiB, a hundred times a
    /// camera's EXIF and larger than any common ICC profile.
    public static let maximumBlockSize = 1 << 20

    /// Creates metadata from raw blocks.
    public init(exif: Data? = nil, xmp: Data? = nil, iptc: Data? = nil, iccProfile: Data? = nil) {
        self.exif = exif
        self.xmp = xmp
        self.iptc = iptc
        self.iccProfile = iccProfile
    }

    /// Whether the ICC profile describes RGB pixels (its header's colour
    /// space is `RGB `): the only kind an encoder may keep for an RGB or
    /// RGBA answer; a CMYK or gray one describes other pixels.
    public var hasRGBProfile: Bool {
        guard let iccProfile, iccProfile.count >= 20 else { return false }
        return iccProfile[iccProfile.startIndex + 16..<iccProfile.startIndex + 20].elementsEqual("RGB ".utf8)
    }

    /// Whether there is nothing to write.
    public var isEmpty: Bool { exif == nil && xmp == nil && iptc == nil && iccProfile == nil }

    /// Only what states who made the image and who owns it: EXIF Artist and
    /// Copyright, IPTC By-line, Credit and Copyright Notice. XMP is left out
    /// (its copyright fields are not picked out of it); the ICC profile is
    /// kept, since it is no statement about the image but how to show it.
    public func keepingCopyrightOnly() -> ImageMetadata {
        ImageMetadata(
            exif: exif.flatMap(EXIF.copyrightOnly), iptc: iptc.flatMap(PhotoshopResources.copyrightOnly), iccProfile: iccProfile
        )
    }

    /// The same metadata saying the pixels are stored upright (EXIF
    /// orientation 1): for pixels that were turned as the tag said, so that
    /// a viewer does not turn them again.
    public func upright() -> ImageMetadata {
        var copy = self
        copy.exif = exif.map { EXIF.settingOrientation(1, in: $0) }
        return copy
    }
}
