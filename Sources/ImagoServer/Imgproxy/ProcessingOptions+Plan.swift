import Foundation

extension ProcessingOptions {
    /// The plan these options make, answered in `format` (settled from
    /// `f` and the Accept field). What of the metadata is kept follows
    /// imgproxy's `sm`, `kcr` and `scp`: everything with `sm:0`; else, with
    /// `kcr` (the default), the copyright fields only; the ICC profile only
    /// with `scp:0`, and only an RGB one. `skp` passes the formats it names
    /// unless `f` names another.
    func plan(format: OutputFormat) -> ProcessingPlan {
        ProcessingPlan(
            layout: .imgproxy(self), format: format, quality: quality, formatQuality: formatQuality, maximumBytes: maxBytes,
            metadata: .init(everything: !stripMetadata, copyright: keepCopyright, rgbProfile: !stripColorProfile, viewerTurns: !autoRotate),
            limits: sourceLimits, page: page, prefersEmbeddedThumbnail: enforceThumbnail, raw: raw,
            keepsSVG: self.format == .svg || self.format == .auto,
            passedFormats: self.format == .auto ? skipProcessing : skipProcessing.intersection([self.format]))
    }

    /// How the answer is sent: `exp`, `fn` and `att`.
    func delivery(negotiated: Bool) -> Delivery {
        Delivery(expires: expires, filename: filename, attachment: returnAttachment, negotiated: negotiated)
    }
}
