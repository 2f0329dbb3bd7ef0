import Foundation
import ImagoCodecs

extension ThumborProcessor {
    /// The plan of this URL: its layout, and what its filters say about
    /// the answer rather than its pixels, the last of each filter given
    /// winning, as in thumbor: `format()` (a format Imago does not know
    /// keeps the source's), `quality()`, `max_bytes()`, and `strip_icc()`
    /// (else an RGB ICC profile is kept with the pixels as stored, as
    /// thumbor keeps it; no EXIF is written, as by thumbor's default).
    func plan() throws(ServiceError) -> ProcessingPlan {
        var plan = ProcessingPlan(layout: .thumbor(self), metadata: .init(rgbProfile: true))
        for filter in filters {
            switch filter {
            case .format(let named): plan.format = try named.map { (named) throws(ServiceError) in try OutputFormat(named, accept: "") }
            case .quality(let value): plan.quality = min(100, max(1, value))
            case .maxBytes(let bytes): plan.maximumBytes = bytes
            case .stripICC: plan.metadata.rgbProfile = false
            default: break
            }
        }
        return plan
    }

    /// How the answer is sent: `max_age()` caps its lifetime.
    func delivery(now: Int) -> Delivery {
        var delivery = Delivery()
        for case .maxAge(let seconds) in filters { delivery.expires = now + seconds }
        return delivery
    }
}

extension OutputFormat {
    /// The format thumbor answers a source in when no `format()` names
    /// one: the source's, formats Imago does not write as JPEG (as thumbor
    /// writes unknown ones), an SVG as PNG (as thumbor rasterises one with
    /// CairoSVG into a PNG).
    static func keeping(_ source: ImageFormat) -> OutputFormat {
        switch source {
        case .png, .svg: .png
        case .gif: .gif
        case .webp: .webp
        case .avif: .avif
        default: .jpeg
        }
    }
}
