import Foundation
import ImagoCodecs

extension ProcessingOptions {
    /// What of the source's metadata the answer carries, as imgproxy's
    /// `sm`, `kcr` and `scp` say: everything with `sm:0`; else, with `kcr`
    /// (the default), the copyright fields only; the ICC profile only with
    /// `scp:0` (Imago does not convert colours yet, so the profile is what
    /// keeps them right). `source` is read only when something is kept.
    ///
    /// The EXIF orientation is set upright when the pixels were turned by
    /// it, or were turned by the decoder whatever it says (HEIC, AVIF, PNG):
    /// only `ar:0` on a JPEG or WebP keeps it, for the viewer to apply.
    func keptMetadata(of source: Data, header: ImageHeader) -> ImageMetadata {
        guard !stripMetadata || keepCopyright || !stripColorProfile else { return ImageMetadata() }
        let read = ImageMetadata(reading: source)
        var kept = stripMetadata ? (keepCopyright ? read.keepingCopyrightOnly() : ImageMetadata()) : read
        kept.iccProfile = stripColorProfile ? nil : read.iccProfile
        let viewerTurns = !autoRotate && header.orientation != .up
        return viewerTurns ? kept : kept.upright()
    }
}
