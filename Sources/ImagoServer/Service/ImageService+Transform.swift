import Foundation
import Imago

extension ImageService {
    /// Fetches the source (through the pipeline's disk cache, under its
    /// HTTP rules) and makes the answer `production` says, unless the source
    /// comes back with the validator `previous` was made from: then
    /// `previous` is renewed as it is. Each step waits for its turn
    /// (``AdmissionControl``; ``make(_:from:of:ticket:)`` waits for the
    /// transformation turn itself, if it needs one).
    /// The answer is kept in the result cache before it is returned. In a
    /// trace, the steps are the spans `source fetch` and `store` (and the
    /// pipeline's `decode`, `transform` and `encode`).
    func makeResult(
        _ key: ResultKey, source url: URL, forwarded: HTTPFields, previous: EncodedResult?,
        production: Production
    ) async throws(ServiceError) -> EncodedResult {
        let ticket = try admission.admit()
        defer { ticket.end() }
        try await ticket.download()
        let source: DataResponse
        // A source asked for with a client's fields is that client's: never
        // taken from the source cache, nor kept there for another. The
        // fields go to the origin the URL names, never past a redirect away.
        var request = ImageRequest(url: url)
        if !forwarded.isEmpty {
            request.cachePolicy = .none
            request.scopedHeaders = URLPrefix(origin: url).map { [ScopedFields(prefix: $0, fields: forwarded)] } ?? []
        }
        source = try await TraceSpans.run("source fetch") { () throws(ServiceError) in
            do throws(ImagePipeline.Error) { return try await pipeline.data(for: request) } catch { throw ServiceError(error) }
        }
        guard source.statusCode == 200 || source.statusCode == 203 else {
            throw ServiceError(ImagePipeline.Error.httpStatus(code: source.statusCode, url: url))
        }
        let version = SourceVersion(source, maxAge: configuration.maxAge, resultLifetime: results.lifetime)
        if let previous, previous.sourceValidator == version.validator {
            let renewed = previous.renewed(maxAge: version.maxAge, lifetime: version.lifetime)
            await results.store(renewed, forKey: key)
            return renewed
        }
        let (bytes, mediaType) = try await make(production, from: source, of: url, ticket: ticket)
        let result = EncodedResult(
            data: bytes, mediaType: mediaType, sourceValidator: version.validator, lastModified: version.lastModified,
            maxAge: version.maxAge, lifetime: version.lifetime
        )
        await TraceSpans.run("store") {
            await results.store(result, forKey: key)
            store?.put(result, forKey: key)
        }
        return result
    }

    /// The answer made of the source itself, and its media type; nil when
    /// the source is to be transformed.
    ///
    /// An SVG source is answered as SVG, sanitised (``SVGSanitizer``, on a
    /// decode thread, in a transformation turn), for `f:svg`, for `raw`,
    /// and, as imgproxy answers one without `IMGPROXY_ALWAYS_RASTERIZE_SVG`,
    /// when the URL names no format (`f:auto`, whatever `skp` and the
    /// Accept field say); a raster format rasterises it. A raster source
    /// comes as it is for `raw`, or when `skp` names its format and `f`
    /// names no other; `f:svg` refuses it with a 422.
    func passedThrough(
        _ source: DataResponse, of url: URL, plan: ProcessingPlan, ticket: AdmissionControl.Ticket
    ) async throws(ServiceError) -> (Data, mediaType: String)? {
        let sourceFormat = ImageFormat(sniffing: source.data)
        if sourceFormat == .svg, plan.raw || plan.keepsSVG {
            try checkSVGSize(source.data, limits: plan.limits)
            try await ticket.transform()
            return (try await sanitized(source.data, of: url), ImageFormat.svg.mediaType)
        }
        if plan.raw {
            let mediaType = sourceFormat == .unknown ? source.headers.first(.contentType) ?? "application/octet-stream" : sourceFormat.mediaType
            return (source.data, mediaType)
        }
        if plan.format == .svg {
            throw ServiceError(.unprocessableContent, "the output format svg is for SVG sources only; the source is \(sourceFormat)")
        }
        guard let named = ProcessingOptions.Format(name: sourceFormat.rawValue), plan.passedFormats.contains(named) else { return nil }
        return (source.data, sourceFormat.mediaType)
    }

    /// Refuses with a 413, as a decode would be refused, an SVG answered
    /// as itself that is larger than `msfs` or declares more pixels than
    /// `msr` or the service's pixel limit: a client would render it at
    /// that size.
    func checkSVGSize(_ data: Data, limits: ProcessingOptions.SourceLimits) throws(ServiceError) {
        if let limit = limits.maximumFileSize, data.count > limit {
            throw ServiceError(.contentTooLarge, "the source is larger than \(limit) bytes (msfs)")
        }
        let limit = min(limits.maximumPixelCount ?? .max, configuration.maximumPixelCount)
        guard let size = ImageHeader(data).storedSize else { return }
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        guard overflow || pixels > limit else { return }
        throw ServiceError(.contentTooLarge, "the source is too large: SVG declares \(size) pixels, over the limit of \(limit)")
    }

    /// `data`, an SVG document, sanitised on a decode thread; a 422 for
    /// one the sanitiser does not read.
    func sanitized(_ data: Data, of url: URL) async throws(ServiceError) -> Data {
        let outcome = await pipeline.decodeThreads.run { () -> Result<Data, ImageDecodingError> in
            Result { () throws(ImageDecodingError) in try SVGSanitizer().sanitize(data) }
        }
        do { return try outcome.get() } catch { throw ServiceError(ImagePipeline.Error.decodingFailed(key: url.absoluteString, underlying: error)) }
    }

    /// Decodes `data` as `plan` says (scaled down while decoding as far
    /// as its layout allows, then laid out), drawing `overlays`, and encodes
    /// it, on one of the pipeline's decode threads, within the decode
    /// memory budget: the one execution of every URL language's plan.
    func transform(_ data: Data, of url: URL, plan: ProcessingPlan, overlays: [String: Image]) async throws(ServiceError) -> (Data, mediaType: String)
    {
        if let limit = plan.limits.maximumFileSize, data.count > limit {
            throw ServiceError(.contentTooLarge, "the source is larger than \(limit) bytes (msfs)")
        }
        let header = ImageHeader(data)
        // The header describes a TIFF's first page: another is measured once decoded.
        let sourceSize = plan.page != 0 && header.format == .tiff ? nil : header.uprightSize
        if let limit = plan.limits.maximumPixelCount, let size = sourceSize, size.width * size.height > limit {
            throw ServiceError(.contentTooLarge, "the source has \(size) pixels, more than the URL's limit of \(limit) (msr)")
        }
        let format = plan.format ?? .keeping(header.format)
        let quality = format.quality(
            plan.quality, formatQuality: plan.formatQuality, serviceQuality: configuration.quality, serviceFormatQuality: configuration.formatQuality)
        let metadata = plan.metadata.kept(of: data, orientation: header.orientation)
        // An animation is answered animated where the format animates, as
        // many frames as allowed, unless a size in bytes is asked for.
        let frameLimit = plan.limits.maximumAnimationFrames ?? configuration.maximumFrameCount
        let animated =
            plan.maximumBytes > 0 || frameLimit < 2 || plan.page != 0 ? nil : format.animatedEncoder(quality: quality, metadata: metadata)
        if animated != nil { try checkAnimation(header, limits: plan.limits, frameLimit: frameLimit) }
        var request = layoutRequest(plan.layout, of: url, header: header, sourceSize: sourceSize, format: format, overlays: overlays)
        request.prefersEmbeddedThumbnail = plan.prefersEmbeddedThumbnail
        request.page = plan.page
        // A kept profile describes the pixels as stored; else they are converted.
        request.convertsToSRGB = metadata.iccProfile == nil
        let encoder: any ImageEncoding =
            plan.maximumBytes > 0
            ? FittingEncoder(quality: quality, maximumBytes: plan.maximumBytes) { format.encoder(quality: $0, metadata: metadata) }
            : format.encoder(quality: quality, metadata: metadata)
        return try await render(data, as: request, encodedWith: encoder, animatingWith: animated, maximumFrameCount: frameLimit)
    }

    /// The pipeline's request that lays out a source with `header` by
    /// `layout`'s rules: imgproxy's decoded scaled down as far as its sizes
    /// allow (a vector source rendered at the answer's size), with the
    /// operator's watermark opacity and result size limit; thumbor's whole,
    /// an SVG rendered at the size thumbor asks CairoSVG for.
    private func layoutRequest(
        _ layout: ProcessingPlan.Layout, of url: URL, header: ImageHeader, sourceSize: ImageSize?, format: OutputFormat, overlays: [String: Image]
    ) -> ImageRequest {
        switch layout {
        case .imgproxy(var options):
            options.watermark.opacity *= configuration.watermarkOpacity
            let processor = LayoutProcessor(
                options: options, sourceSize: sourceSize, orientation: header.orientation, outputIsOpaque: format.isOpaque,
                maximumResultDimension: min(configuration.maximumResultDimension, options.sourceLimits.maximumResultDimension ?? .max),
                watermark: overlays[""], sourceIsVector: header.format == .svg
            )
            return ImageRequest(url: url, targetSize: processor.decodeSize, contentMode: .fill, processors: [processor])
        case .thumbor(let processor):
            var request = ImageRequest(url: url, processors: [processor.drawing(overlays)])
            if header.format == .svg { (request.targetSize, request.contentMode) = processor.path.svgRenderSize }
            return request
        }
    }

    /// Refuses with a 422, before decoding, an animation (a GIF, WebP or
    /// AVIF sequence, whose frames the header counts) too large to answer animated: with
    /// `mafr`, a frame of more pixels than it allows; else frames to render
    /// (up to `frameLimit`) of more pixels in all than `msr` or the
    /// service's pixel limit allows.
    func checkAnimation(_ header: ImageHeader, limits: ProcessingOptions.SourceLimits, frameLimit: Int) throws(ServiceError) {
        guard let frames = header.frameCount, frames > 1, let size = header.storedSize else { return }
        let (framePixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        if let limit = limits.maximumAnimationFramePixels {
            guard !overflow, framePixels <= limit else {
                throw ServiceError(.unprocessableContent, "a frame of the animation has \(size) pixels, more than the URL's limit of \(limit) (mafr)")
            }
            return
        }
        let limit = limits.maximumPixelCount ?? configuration.maximumPixelCount
        let rendered = min(frames, frameLimit)
        let (total, totalOverflow) = framePixels.multipliedReportingOverflow(by: rendered)
        guard !overflow, !totalOverflow, total <= limit else {
            throw ServiceError(
                .unprocessableContent, "the animation's \(rendered) frames of \(size) are more pixels than the limit of \(limit) (msr, maf)"
            )
        }
    }

    /// Decodes `data` as `request` asks (its processors lay the image out)
    /// and encodes it with `encoder`, on one of the pipeline's decode
    /// threads, within the pipeline's decode memory limit.
    func render(
        _ data: Data, as request: ImageRequest, encodedWith encoder: any ImageEncoding, animatingWith animated: (any AnimatedImageEncoding)? = nil,
        maximumFrameCount: Int = 1
    ) async throws(ServiceError) -> (Data, mediaType: String) {
        let bytes: Data
        do {
            if let animated {
                bytes = try await pipeline.render(
                    data, as: request, encodedWith: encoder, animatingWith: animated, maximumFrameCount: maximumFrameCount)
            } else {
                bytes = try await pipeline.render(data, as: request, encodedWith: encoder)
            }
        } catch {
            throw ServiceError(error)
        }
        return (bytes, ImageFormat(sniffing: bytes).mediaType)
    }
}
