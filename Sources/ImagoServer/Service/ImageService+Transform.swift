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
        _ source: DataResponse, of url: URL, options: ProcessingOptions, format: OutputFormat, ticket: AdmissionControl.Ticket
    ) async throws(ServiceError) -> (Data, mediaType: String)? {
        let sourceFormat = ImageFormat(sniffing: source.data)
        if sourceFormat == .svg, options.raw || options.format == .svg || options.format == .auto {
            try checkSVGSize(source.data, options: options)
            try await ticket.transform()
            return (try await sanitized(source.data, of: url), ImageFormat.svg.mediaType)
        }
        if options.raw {
            let mediaType = sourceFormat == .unknown ? source.headers.first(.contentType) ?? "application/octet-stream" : sourceFormat.mediaType
            return (source.data, mediaType)
        }
        if format == .svg {
            throw ServiceError(.unprocessableContent, "the output format svg is for SVG sources only; the source is \(sourceFormat)")
        }
        guard let named = ProcessingOptions.Format(name: sourceFormat.rawValue), options.skipProcessing.contains(named),
            options.format == .auto || options.format == named
        else { return nil }
        return (source.data, sourceFormat.mediaType)
    }

    /// Refuses with a 413, as a decode would be refused, an SVG answered
    /// as itself that is larger than `msfs` or declares more pixels than
    /// `msr` or the service's pixel limit: a client would render it at
    /// that size.
    func checkSVGSize(_ data: Data, options: ProcessingOptions) throws(ServiceError) {
        if let limit = options.sourceLimits.maximumFileSize, data.count > limit {
            throw ServiceError(.contentTooLarge, "the source is larger than \(limit) bytes (msfs)")
        }
        let limit = min(options.sourceLimits.maximumPixelCount ?? .max, configuration.maximumPixelCount)
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

    /// Decodes `data` for `options` (scaled down while decoding as far as
    /// the layout allows, then laid out by a ``LayoutProcessor``) and
    /// encodes it, on one of the pipeline's decode threads, within the
    /// decode memory budget.
    func transform(
        _ data: Data, of url: URL, options: ProcessingOptions, format: OutputFormat
    ) async throws(ServiceError) -> (Data, mediaType: String) {
        if let limit = options.sourceLimits.maximumFileSize, data.count > limit {
            throw ServiceError(.contentTooLarge, "the source is larger than \(limit) bytes (msfs)")
        }
        let header = ImageHeader(data)
        // The header describes a TIFF's first page: another is measured once decoded.
        let sourceSize = options.page != 0 && header.format == .tiff ? nil : header.uprightSize
        if let limit = options.sourceLimits.maximumPixelCount, let size = sourceSize, size.width * size.height > limit {
            throw ServiceError(.contentTooLarge, "the source has \(size) pixels, more than the URL's limit of \(limit) (msr)")
        }
        let quality = format.quality(options, serviceQuality: configuration.quality, serviceFormatQuality: configuration.formatQuality)
        let metadata = options.keptMetadata(of: data, header: header)
        // An animation is answered animated where the format animates, as
        // many frames as maf allows, and mb is not asked for.
        let frameLimit = options.sourceLimits.maximumAnimationFrames ?? configuration.maximumFrameCount
        let animated =
            options.maxBytes > 0 || frameLimit < 2 || options.page != 0 ? nil : format.animatedEncoder(quality: quality, metadata: metadata)
        if animated != nil { try checkAnimation(header, options: options, frameLimit: frameLimit) }
        var layoutOptions = options
        layoutOptions.watermark.opacity *= configuration.watermarkOpacity
        let watermarkImage = options.watermark.isEnabled ? try await watermark(for: options) : nil
        let layout = LayoutProcessor(
            options: layoutOptions, sourceSize: sourceSize, orientation: header.orientation, outputIsOpaque: format.isOpaque,
            maximumResultDimension: min(configuration.maximumResultDimension, options.sourceLimits.maximumResultDimension ?? .max),
            watermark: watermarkImage, sourceIsVector: header.format == .svg
        )
        var request = ImageRequest(url: url, targetSize: layout.decodeSize, contentMode: .fill, processors: [layout])
        request.prefersEmbeddedThumbnail = options.enforceThumbnail
        request.page = options.page
        // A kept profile describes the pixels as stored; else they are converted.
        request.convertsToSRGB = metadata.iccProfile == nil
        let encoder: any ImageEncoding =
            options.maxBytes > 0
            ? FittingEncoder(quality: quality, maximumBytes: options.maxBytes) { format.encoder(quality: $0, metadata: metadata) }
            : format.encoder(quality: quality, metadata: metadata)
        return try await render(data, as: request, encodedWith: encoder, animatingWith: animated, maximumFrameCount: frameLimit)
    }

    /// Refuses with a 422, before decoding, an animation (a GIF, WebP or
    /// AVIF sequence, whose frames the header counts) too large to answer animated: with
    /// `mafr`, a frame of more pixels than it allows; else frames to render
    /// (up to `frameLimit`) of more pixels in all than `msr` or the
    /// service's pixel limit allows.
    func checkAnimation(_ header: ImageHeader, options: ProcessingOptions, frameLimit: Int) throws(ServiceError) {
        guard let frames = header.frameCount, frames > 1, let size = header.storedSize else { return }
        let (framePixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        if let limit = options.sourceLimits.maximumAnimationFramePixels {
            guard !overflow, framePixels <= limit else {
                throw ServiceError(.unprocessableContent, "a frame of the animation has \(size) pixels, more than the URL's limit of \(limit) (mafr)")
            }
            return
        }
        let limit = options.sourceLimits.maximumPixelCount ?? configuration.maximumPixelCount
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

    /// The watermark's pixels (``readOptions`` has refused `wm` on a server without one).
    private func watermark(for options: ProcessingOptions) async throws(ServiceError) -> Image {
        guard let watermark else { throw ServiceError(.badRequest, "bad option \"wm\": this server has no watermark image") }
        return try await watermark.image(using: pipeline, policy: configuration.sourcePolicy)
    }
}
