import Foundation
import ImagoCodecs

/// What an image URL asks of a miss, whichever language spelt it: how the
/// decoded source is laid out, and how the answer is written. Each URL
/// language's parser makes one (``ProcessingOptions/plan(format:)``,
/// ``ThumborProcessor/plan(settings:)``), and
/// ``ImageService/transform(_:of:plan:)`` executes any of them.
struct ProcessingPlan: Sendable {
    /// The layout's rules: a URL language's sizes, rounding and order,
    /// each step carried out by the model's ``Operation``s.
    enum Layout: Sendable {
        case imgproxy(ProcessingOptions)
        case thumbor(ThumborProcessor)
    }

    var layout: Layout
    /// The answer's format; nil keeps the source's, as thumbor does
    /// (``OutputFormat/keeping(_:)``).
    var format: OutputFormat?
    /// The quality asked for (0: the service's for the format), and per format.
    var quality = 0
    var formatQuality: [ProcessingOptions.Format: Int] = [:]
    /// The answer's size in bytes at most, lowering the quality; 0 for no limit.
    var maximumBytes = 0
    var metadata = KeptMetadata()
    var limits = ProcessingOptions.SourceLimits()
    /// A page of a multi-page source, or a frame of an animation, as a still.
    var page = 0
    var prefersEmbeddedThumbnail = false
    /// A source answered as it came, whatever it is.
    var raw = false
    /// An SVG source answered as SVG, sanitised, rather than rasterised.
    var keepsSVG = false
    /// The source formats answered as they came.
    var passedFormats: Set<ProcessingOptions.Format> = []

    /// What of the source's metadata the answer carries.
    struct KeptMetadata: Sendable {
        /// EXIF, XMP and IPTC, all of them.
        var everything = false
        /// Only the copyright fields of EXIF and IPTC.
        var copyright = false
        /// An RGB ICC profile, with the pixels as stored (else they are
        /// converted to sRGB and the answer needs none).
        var rgbProfile = false
        /// The EXIF orientation left for the viewer to apply, with the
        /// pixels as stored (imgproxy's `ar:0`).
        var viewerTurns = false

        /// What is kept of `source`'s metadata; `source` is read only when
        /// something is kept. The EXIF orientation is set upright, unless
        /// the viewer turns an image stored turned (`orientation`).
        func kept(of source: Data, orientation: ImageOrientation) -> ImageMetadata {
            guard everything || copyright || rgbProfile else { return ImageMetadata() }
            let read = ImageMetadata(reading: source)
            var kept = everything ? read : (copyright ? read.keepingCopyrightOnly() : ImageMetadata())
            kept.iccProfile = rgbProfile && read.hasRGBProfile ? read.iccProfile : nil
            return viewerTurns && orientation != .up ? kept : kept.upright()
        }
    }
}

/// How an answer is sent, whichever language asked for it: for how long
/// clients may keep it, and under what file name.
struct Delivery: Sendable {
    /// The Unix time after which the answer may not be kept; nil for none.
    var expires: Int?
    /// The file name without extension (else the source's).
    var filename: String?
    var attachment = false
    /// Whether the format followed the Accept field (`Vary: Accept`).
    var negotiated = false
}
