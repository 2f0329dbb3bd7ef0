import Foundation
import ImagoCodecs

extension ProcessingOptions {
    /// What of the source's metadata the answer carries, as imgproxy's
    /// `sm`, `kcr` and `scp` say: everything with `sm:0`; else, with `kcr`
    /// (the default), the copyright fields only; the ICC profile only with
    /// `scp:0`, and only an RGB one: then the pixels stay as stored, and
    /// the profile shows them right; else they are converted to sRGB and
    /// the answer needs none. `source` is read only when something is kept.
    ///
    /// The EXIF orientation is set upright when the pixels were turned by
    /// it, or were turned by the decoder whatever it says (HEIC, AVIF, PNG):
    /// only `ar:0` on a JPEG or WebP keeps it, for the viewer to apply.
    func keptMetadata(of source: Data, header: ImageHeader) -> ImageMetadata {
        guard !stripMetadata || keepCopyright || !stripColorProfile else { return ImageMetadata() }
        let read = ImageMetadata(reading: source)
        var kept = stripMetadata ? (keepCopyright ? read.keepingCopyrightOnly() : ImageMetadata()) : read
        kept.iccProfile = !stripColorProfile && read.hasRGBProfile ? read.iccProfile : nil
        let viewerTurns = !autoRotate && header.orientation != .up
        return viewerTurns ? kept : kept.upright()
    }
}
