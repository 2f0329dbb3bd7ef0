import Crypto
import Foundation
import Imago
import ImagoCaching
import Logging
import NIOCore

/// The image service without its HTTP server: a request's method, raw path
/// and headers in, a status, headers and body out. `imago serve` puts it
/// behind Hummingbird; tests call it directly too.
///
/// `GET /{signature}/{options}/{source}`: the signature checked, the options
/// bounded, the source checked against the ``SourcePolicy`` (and its
/// addresses, at every connection, by the loader's ``PolicySourceGuard``),
/// then the pipeline loads, decodes at the needed scale, processes, and the
/// result is encoded in the negotiated format.
public final class ImageService: Sendable {
    public let configuration: Configuration
    /// What `/metrics` prints.
    public let metrics: ServiceMetrics
    let pipeline: ImagePipeline
    let admission: AdmissionControl
    let results: ResultCache
    let decodeBudget: DecodeBudget
    private let logger: Logger

    /// A service with its own pipeline: a guarded HTTP loader, a memory
    /// cache, and in `configuration.cacheFolder` a disk cache of the sources
    /// (`sources/`, from their second fetch unless `sourceAdmission` says
    /// otherwise) and one of the encoded answers (`results/`).
    public convenience init(
        configuration: Configuration, metrics: ServiceMetrics = ServiceMetrics(), logger: Logger = Logger(label: "imago.serve")
    ) throws {
        let loader = HTTPDataLoader(configuration: .init(
            requestTimeout: configuration.sourceTimeout,
            maximumResponseSize: configuration.maximumSourceSize,
            // A source body of unknown length goes to disk past 1 MiB, not to
            // /tmp, which may be memory (tmpfs).
            temporaryDirectory: configuration.cacheFolder ?? NSTemporaryDirectory(),
            userAgent: "Imago",
            sourceGuard: PolicySourceGuard(policy: configuration.sourcePolicy)
        ))
        let dataCache = try configuration.cacheFolder.map {
            try DiskCache(path: $0 + "/sources", configuration: .init(sizeLimit: configuration.sourceDiskLimit, admission: configuration.sourceAdmission))
        }
        let resultsCache = try configuration.cacheFolder.map {
            try DiskCache(path: $0 + "/results", configuration: .init(sizeLimit: configuration.resultDiskLimit))
        }
        let pipeline = ImagePipeline(configuration: .init(
            dataLoader: loader,
            dataCache: dataCache,
            maximumPixelCount: configuration.maximumPixelCount,
            maximumFrameCount: configuration.maximumFrameCount,
            // One attempt: the client (a browser, a CDN) decides on retries,
            // and a request's time is bounded by the source timeout alone.
            retryPolicy: RetryPolicy(maximumAttempts: 1),
            logger: logger
        ))
        self.init(configuration: configuration, pipeline: pipeline, resultsOnDisk: resultsCache, metrics: metrics, logger: logger)
    }

    /// A service over a pipeline of the caller's (tests).
    public init(
        configuration: Configuration, pipeline: ImagePipeline, resultsOnDisk: DiskCache? = nil, metrics: ServiceMetrics = ServiceMetrics(),
        logger: Logger = Logger(label: "imago.serve")
    ) {
        self.configuration = configuration
        self.pipeline = pipeline
        self.metrics = metrics
        self.logger = logger
        decodeBudget = DecodeBudget(bytes: configuration.decodeMemoryBudget)
        results = ResultCache(costLimit: configuration.resultCacheSize, lifetime: configuration.resultLifetime, disk: resultsOnDisk)
        admission = AdmissionControl(
            limit: configuration.maximumConcurrentTransformations, queueCapacity: configuration.queueCapacity, queueTimeout: configuration.queueTimeout
        )
    }

    /// Saves the source cache's index snapshot and releases its folder:
    /// call once the server has stopped.
    public func close() {
        (pipeline.configuration.dataCache as? DiskCache)?.close()
        results.close()
    }

    /// Answers one request; never throws: every failure is a status with a
    /// plain-text body saying what went wrong.
    public func respond(to request: ServiceRequest) async -> ServiceResponse {
        let end = metrics.begin()
        let response: ServiceResponse
        switch request.path {
        case _ where request.method != "GET" && request.method != "HEAD":
            response = .error(405, "only GET and HEAD are served", maxAge: configuration.errorMaxAge, extraHeaders: [("Allow", "GET, HEAD")])
        case let path where configuration.demo?.serves(path) == true:
            response = configuration.demo?.page(path) ?? .error(404, "no such demo page", maxAge: configuration.errorMaxAge)
        case "/health": response = ServiceResponse(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")], body: Data("ok\n".utf8))
        case "/metrics":
            response = ServiceResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Data(metrics.exposition(queueLength: admission.queueLength).utf8)
            )
        case "/", "/favicon.ico": response = .error(404, "not found: image URLs are /{signature}/{options}/{source}", maxAge: configuration.errorMaxAge)
        default:
            do {
                response = try await image(for: request)
            } catch {
                response = .error(error.status, error.message, maxAge: configuration.errorMaxAge, extraHeaders: error.headers)
            }
        }
        end(response.status)
        return request.method == "HEAD" ? response.withoutBody() : response
    }

    // MARK: Images

    private func image(for request: ServiceRequest) async throws(ServiceError) -> ServiceResponse {
        let path: ImageURLPath
        let options: ProcessingOptions
        do {
            path = try ImageURLPath(request.path)
            options = try ProcessingOptions(segments: path.options, presets: configuration.presets)
            try checkSignature(path, options: options)
        } catch let error as PathError {
            throw ServiceError(status: 400, message: error.description)
        } catch let error as OptionError {
            throw ServiceError(status: 400, message: error.description)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError(status: 400, message: "\(error)")
        }
        let url: URL
        do {
            url = try configuration.sourcePolicy.check(url: path.source)
        } catch {
            throw ServiceError(refusal: error)
        }
        let accept = request.header("Accept") ?? ""
        let format = Self.outputFormat(options.format, accept: accept)
        let key = ResultCache.key(source: url, options: options, format: format)
        let result: EncodedResult
        let outcome: ServiceResponse.CacheOutcome
        let kept = await results.cached(key)
        if let kept, ContinuousClock.now < kept.expires {
            metrics.resultCacheHit()
            result = kept
            outcome = .hit
        } else {
            result = try await results.result(for: key) { [self] () throws(ServiceError) in
                try await makeResult(url, options: options, format: format, previous: kept, key: key)
            }
            outcome = kept?.etag == result.etag ? .revalidated : .miss
        }
        var headers: [(String, String)] = [
            ("Content-Type", result.mediaType),
            ("Cache-Control", "public, max-age=\(result.maxAge)"),
            ("ETag", result.etag),
        ]
        if let lastModified = result.lastModified { headers.append(("Last-Modified", lastModified)) }
        if options.format == .auto { headers.append(("Vary", "Accept")) }
        let status = Self.isNotModified(request, etag: result.etag, lastModified: result.lastModified) ? 304 : 200
        return ServiceResponse(status: status, headers: headers, bytes: status == 304 ? ByteBuffer() : result.bytes, cacheOutcome: outcome)
    }

    /// Whether the client's copy is current (RFC 9110 §13.1): a matching
    /// If-None-Match, or, only when there is none, an If-Modified-Since no
    /// earlier than the source's Last-Modified.
    static func isNotModified(_ request: ServiceRequest, etag: String, lastModified: String?) -> Bool {
        if let match = request.header("If-None-Match") {
            return match.split(separator: ",").contains { tag in
                let tag = tag.trimmingCharacters(in: .whitespaces)
                return tag == "*" || tag == etag || tag == "W/" + etag
            }
        }
        guard let since = request.header("If-Modified-Since").flatMap(HTTPDate.parse),
              let modified = lastModified.flatMap(HTTPDate.parse) else { return false }
        return modified <= since
    }

    private func checkSignature(_ path: ImageURLPath, options: ProcessingOptions) throws(ServiceError) {
        if path.signature == "unsafe" {
            if configuration.allowsUnsigned { return }
            if configuration.allowedSizes.contains(ImageSize(width: options.width, height: options.height)) { return }
            let sizes = configuration.allowedSizes.isEmpty
                ? "" : " (except for the sizes \(configuration.allowedSizes.map(\.description).sorted().joined(separator: ", ")))"
            throw ServiceError(status: 403, message: "unsigned URLs are not accepted by this server\(sizes)")
        }
        guard let signing = configuration.signing else {
            throw ServiceError(status: 403, message: "this server has no signing keys: only unsigned (unsafe) URLs, if allowed")
        }
        guard signing.isValid(signature: path.signature, for: path.signedPath) else {
            throw ServiceError(status: 403, message: "invalid signature")
        }
    }

    /// Fetches the source (through the pipeline's disk cache, under its
    /// HTTP rules) and transforms it, unless it comes back with the
    /// validator `previous` was made from: then `previous` is renewed as it
    /// is. Each step waits for its turn (``AdmissionControl``). The answer
    /// is kept in the result cache under `key` before it is returned.
    private func makeResult(
        _ url: URL, options: ProcessingOptions, format: OutputFormat, previous: EncodedResult?, key: String
    ) async throws(ServiceError) -> EncodedResult {
        let ticket = try admission.admit()
        defer { ticket.end() }
        try await ticket.download()
        let source: DataResponse
        do {
            source = try await pipeline.data(for: ImageRequest(url: url))
        } catch {
            throw ServiceError(error)
        }
        // Without a validator of the source's own, its bytes' fingerprint: it
        // only tells versions of one URL apart, whose origin could change
        // them at will anyway, so XXH64 is enough (SHA-256 cost 4% of a
        // thumbnail's transformation).
        let validator = source.headers.first(.eTag) ?? source.headers.first(.lastModified)
            ?? "xxh64:" + String(source.data.withUnsafeBytes { Checksum.hash($0) }, radix: 16)
        let remaining = source.freshness.isStale ? 0 : SourceFreshness.remaining(source.headers)
        let maxAge = min(configuration.maxAge, remaining ?? configuration.maxAge)
        // A source without a lifetime of its own is asked again after the result lifetime.
        let lifetime = min(results.lifetime, .seconds(remaining ?? Int(results.lifetime.components.seconds)))
        if let previous, previous.sourceValidator == validator {
            let renewed = previous.renewed(maxAge: maxAge, lifetime: lifetime)
            await ResultCache.onDiskThread { [results] in results.store(renewed, forKey: key) }
            return renewed
        }
        try await ticket.transform()
        let lastModified = source.headers.first(.lastModified)
        // Encoded and kept on the thread that decoded: one hand-off for the whole answer.
        let result = try await transform(source.data, of: url, options: options) { [self] image throws(ServiceError) in
            let resolved = format.resolved(hasAlpha: image.pixelFormat.hasAlpha)
            let result = EncodedResult(
                data: try encode(image, format: resolved, quality: options.quality), mediaType: resolved.mediaType,
                sourceValidator: validator, lastModified: lastModified, maxAge: maxAge, lifetime: lifetime
            )
            results.store(result, forKey: key)
            return result
        }
        metrics.transformed()
        return result
    }

    /// Decodes `data` for `options` on one of the pipeline's decode threads
    /// (scaled toward the box, then the processors in a fixed order) and
    /// hands the image to `finish` there, within the decode budget.
    private func transform(
        _ data: Data, of url: URL, options: ProcessingOptions, then finish: @escaping @Sendable (Image) throws(ServiceError) -> EncodedResult
    ) async throws(ServiceError) -> EncodedResult {
        var targetSize: ImageSize?
        var contentMode = ContentMode.fit
        var processors: [any ImageProcessing] = []
        if options.width > 0 || options.height > 0 {
            let bothSides = options.width > 0 && options.height > 0
            let box = ImageSize(
                width: options.width > 0 ? options.width : ProcessingOptions.Bounds.side.upperBound,
                height: options.height > 0 ? options.height : ProcessingOptions.Bounds.side.upperBound
            )
            targetSize = box
            if bothSides, options.fit != .fit {
                contentMode = .fill
                if options.fit == .crop { processors.append(.resize(to: box, contentMode: .fill, crop: true)) }
            }
        }
        if options.grayscale { processors.append(.grayscale) }
        if options.blur > 0 { processors.append(.gaussianBlur(radius: Double(options.blur))) }
        if options.cornerRadius > 0 { processors.append(.roundedCorners(radius: Double(options.cornerRadius))) }
        let request = ImageRequest(url: url, targetSize: targetSize, contentMode: contentMode, processors: processors)
        // The pixels the decode will hold, from the header; the pixel limit's worth when the header is not read here.
        let decoding = ImageDecodingOptions(targetSize: targetSize, contentMode: contentMode)
        let estimate = decoding.decodedBytesEstimate(of: data) ?? configuration.maximumPixelCount.multipliedReportingOverflow(by: 4).partialValue
        return try await decodeBudget.withReservation(estimate) { () throws(ServiceError) in
            let outcome: Result<EncodedResult, ServiceError>
            do throws(ImagePipeline.Error) {
                outcome = try await pipeline.render(data, as: request) { image in Result { () throws(ServiceError) in try finish(image) } }
            } catch {
                throw ServiceError(error)
            }
            return try outcome.get()
        }
    }

    /// The format to answer in: an explicit one, or for `auto` AVIF, then
    /// WebP, as the client's Accept header allows, else JPEG (PNG for
    /// images with alpha).
    static func outputFormat(_ format: ProcessingOptions.Format, accept: String) -> OutputFormat {
        switch format {
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        case .avif: return .avif
        case .auto:
            return accepts("image/avif", accept) ? .avif : accepts("image/webp", accept) ? .webp : .jpegOrPNG
        }
    }

    /// Whether the Accept field names `mediaType` itself with a weight above
    /// zero. Wildcards do not count: `image/*` and `*/*` say nothing about
    /// whether a client decodes AVIF or WebP.
    static func accepts(_ mediaType: String, _ accept: String) -> Bool {
        accept.split(separator: ",").contains { range in
            let parameters = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parameters.first == mediaType else { return false }
            let weight = parameters.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return weight > 0
        }
    }

    private func encode(_ image: Image, format: OutputFormat, quality: Int) throws(ServiceError) -> Data {
        let encoder: any ImageEncoding = switch format {
        case .png: PNGEncoder()
        case .webp: WebPEncoder(quality: Float(quality))
        case .avif: AVIFEncoder(quality: quality)
        default: JPEGEncoder(quality: quality)
        }
        do {
            return try encoder.encode(image)
        } catch {
            throw ServiceError(status: 422, message: "the image could not be encoded: \(error)")
        }
    }
}

/// An answer's format; `jpegOrPNG` is settled by the image's alpha. The
/// raw values are the case names, part of the result cache's keys.
enum OutputFormat: String, Sendable, Equatable {
    case jpeg, png, webp, avif, jpegOrPNG

    func resolved(hasAlpha: Bool) -> OutputFormat {
        self == .jpegOrPNG ? (hasAlpha ? .png : .jpeg) : self
    }

    var mediaType: String {
        switch self {
        case .jpeg, .jpegOrPNG: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        }
    }
}
