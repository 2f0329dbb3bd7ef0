import Foundation
import HTTPTypes
import Hummingbird
import Imago
import ImagoCaching
import ImagoConcurrency
import Logging
import NIOCore
import Tracing

/// The image service: signed, cached, SSRF-guarded image URLs, as routes
/// for any Hummingbird router. `imago serve` runs them behind its own
/// middleware (``ServeApplication``); a Swift server mounts them beside its
/// own routes:
///
/// ```swift
/// let service = try ImageService(configuration: .init(signing: signing, cacheFolder: "/var/cache/app/images"))
/// let router = Router()
/// router.addRoutes(service.routes, atPath: "/images")
/// ```
///
/// `GET /{signature}/{options}/{source}`: the signature checked, the options
/// bounded, the source checked against the ``SourcePolicy`` (and its
/// addresses, at every connection, by the loader's ``PolicySourceGuard``),
/// then the answer comes from the result cache or is made: the source
/// fetched through the pipeline's disk cache under its HTTP rules, decoded
/// at the needed scale, processed, and encoded in the negotiated format.
public final class ImageService: Sendable {
    public let configuration: Configuration
    /// What `/metrics` prints.
    public let metrics: ServiceMetrics
    let pipeline: ImagePipeline
    let admission: AdmissionControl
    let results: ResultCache
    /// Reads URLs' options, with the configuration's presets.
    let parser: ProcessingOptions.Parser
    /// The options read lately, by their spelling.
    let optionsMemo = OptionsMemo()
    /// The operator's watermark, for `wm`.
    let watermark: Watermark?
    /// Answers shared by every instance, in object storage; nil for none.
    let store: SharedResultStore?
    /// The HTTP loaders this service made, closed by ``shutdown()``; none
    /// when the caller gave the pipeline.
    private let ownLoaders: [HTTPDataLoader]
    /// The service's threads for blocking calls outside the pipeline:
    /// spilled bodies, name lookups, local files, the caches' close.
    private let blockingIO: PriorityThreadPool
    private let isShutDown = Locked(false)

    /// A service with its own pipeline: a guarded HTTP loader and, in
    /// `configuration.cacheFolder`, a disk cache of the sources (`sources/`,
    /// from their second fetch unless `sourceAdmission` says otherwise) and
    /// one of the encoded answers (`results/`). Throws a
    /// ``ConfigurationError`` for a configuration that cannot work (each
    /// component's `validate()`), or the disk cache's error for a folder
    /// it cannot use.
    public convenience init(
        configuration: Configuration, metrics: ServiceMetrics = ServiceMetrics(), logger: Logger = Logger(label: "imago.serve")
    ) throws {
        try configuration.validate()
        // Downloads wait for one limit only, the admission's turns: the
        // pipeline and the HTTP client allow as many, to any one host too.
        let downloads = AdmissionControl.downloadLimit(transformations: configuration.maximumConcurrentTransformations)
        // Spilled bodies, name lookups, local files and the caches' close.
        let blockingIO = PriorityThreadPool(threads: 8, name: "imago-io")
        let http = HTTPDataLoader(
            configuration: .init(
                // A source may stall as long as its whole download may take.
                readTimeout: configuration.sourceTimeout,
                requestTimeout: configuration.sourceTimeout,
                maximumResponseSize: configuration.maximumSourceSize,
                // A source body of unknown length goes to disk past 1 MiB, not to
                // /tmp, which may be memory (tmpfs).
                temporaryDirectory: configuration.cacheFolder ?? NSTemporaryDirectory(),
                maximumConnectionsPerHost: downloads,
                userAgent: "Imago",
                sourceGuard: PolicySourceGuard(policy: configuration.sourcePolicy, threads: blockingIO)
            ), spillThreads: blockingIO)
        // The operator's endpoint is trusted: no guard, and a redirect is an answer.
        let storageHTTP = configuration.objectStorage.map { _ in
            HTTPDataLoader(
                configuration: .init(
                    readTimeout: configuration.sourceTimeout, requestTimeout: configuration.sourceTimeout, maximumRedirects: 0,
                    maximumResponseSize: configuration.maximumSourceSize,
                    temporaryDirectory: configuration.cacheFolder ?? NSTemporaryDirectory(), maximumConnectionsPerHost: downloads,
                    userAgent: "Imago"), spillThreads: blockingIO)
        }
        let objectStorage = configuration.objectStorage.flatMap { storage in storageHTTP.map { ObjectStorageLoader(settings: storage, http: $0) } }
        let loader = OriginLoader(
            http: http,
            local: configuration.localRoot.flatMap { LocalFileLoader(root: $0, maximumSize: configuration.maximumSourceSize, threads: blockingIO) },
            objectStorage: objectStorage, sourceHeaders: configuration.sourceHeaders.map(\.scoped))
        let sources = DiskCache.Configuration(sizeLimit: configuration.sourceDiskLimit, admission: configuration.sourceAdmission)
        let results = DiskCache.Configuration(sizeLimit: configuration.resultDiskLimit)
        try sources.validate()
        try results.validate()
        var pipelineConfiguration = ImagePipeline.Configuration(
            dataLoader: loader,
            // Answers are kept encoded (the result cache), never as decoded images.
            imageCache: nil,
            maximumConcurrentDownloads: downloads,
            maximumConcurrentDownloadsPerHost: downloads,
            // One transformation a thread: --concurrency is the decode threads' count.
            maximumConcurrentDecodes: configuration.maximumConcurrentTransformations,
            maximumPixelCount: configuration.maximumPixelCount,
            maximumFrameCount: configuration.maximumFrameCount,
            // Every decode reserves its pixels in the pipeline's render.
            decodeMemoryLimit: configuration.decodeMemoryBudget,
            // One attempt: the client (a browser, a CDN) decides on retries,
            // and a request's time is bounded by the source timeout alone.
            retryPolicy: RetryPolicy(maximumAttempts: 1),
            logger: logger
        )
        try pipelineConfiguration.validate()
        pipelineConfiguration.dataCache = try configuration.cacheFolder.map { try DiskCache(path: $0 + "/sources", configuration: sources) }
        let resultsCache = try configuration.cacheFolder.map { try DiskCache(path: $0 + "/results", configuration: results) }
        let pipeline = ImagePipeline(configuration: pipelineConfiguration)
        self.init(
            configuration: configuration, pipeline: pipeline, resultsOnDisk: resultsCache, metrics: metrics, logger: logger,
            ownLoaders: [http] + (storageHTTP.map { [$0] } ?? []), blockingIO: blockingIO)
    }

    /// A service over a pipeline of the caller's (tests).
    public convenience init(
        configuration: Configuration, pipeline: ImagePipeline, resultsOnDisk: DiskCache? = nil, metrics: ServiceMetrics = ServiceMetrics(),
        logger: Logger = Logger(label: "imago.serve")
    ) {
        self.init(
            configuration: configuration, pipeline: pipeline, resultsOnDisk: resultsOnDisk, metrics: metrics, logger: logger, ownLoaders: [],
            blockingIO: PriorityThreadPool(threads: 2, name: "imago-io"))
    }

    private init(
        configuration: Configuration, pipeline: ImagePipeline, resultsOnDisk: DiskCache?, metrics: ServiceMetrics, logger: Logger,
        ownLoaders: [HTTPDataLoader], blockingIO: PriorityThreadPool
    ) {
        self.ownLoaders = ownLoaders
        self.blockingIO = blockingIO
        var configuration = configuration
        // The schemes the policy lets through are the origins the service has.
        configuration.sourcePolicy.allowsLocalFiles = configuration.localRoot != nil
        configuration.sourcePolicy.allowsObjectStorage = configuration.objectStorage != nil
        self.configuration = configuration
        self.pipeline = pipeline
        self.metrics = metrics
        parser = ProcessingOptions.Parser(presets: configuration.presets, allowsSourceLimits: configuration.allowsSourceLimits)
        watermark = configuration.watermark.map(Watermark.init)
        store = configuration.resultStore.flatMap { location in
            configuration.objectStorage.map {
                SharedResultStore(
                    location: location, storage: $0, timeout: configuration.resultStoreTimeout, metrics: metrics, logger: logger)
            }
        }
        results = ResultCache(
            costLimit: configuration.resultCacheSize, lifetime: configuration.resultLifetime, disk: resultsOnDisk, diskThreads: pipeline.diskThreads
        )
        admission = AdmissionControl(
            limit: configuration.maximumConcurrentTransformations, queueCapacity: configuration.queueCapacity,
            queueTimeout: configuration.queueTimeout
        )
    }

    /// Waits for the answers on their way to disk, saves the caches' index
    /// snapshots and releases their folders: for an app that does not run
    /// the service in a `ServiceGroup` (``run()`` does this and more), once
    /// its server has stopped. Blocks the calling thread meanwhile.
    public func close() {
        (pipeline.configuration.dataCache as? DiskCache)?.close()
        results.close()
    }

    /// What ``run()`` does once its graceful shutdown comes: waits for the
    /// uploads to the shared store, ``close()``s the caches (off Swift's
    /// cooperative pool), then closes the connections of the loaders the
    /// service made. Idempotent.
    public func shutdown() async throws {
        let first = isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return !isShutDown
        }
        guard first else { return }
        await store?.waitForWrites()
        await blockingIO.run { self.close() }
        for loader in ownLoaders { try await loader.shutdown() }
    }

    // MARK: Routes

    /// The image routes, for a router with the default request context.
    public var routes: RouteCollection<BasicRequestContext> { routes(context: BasicRequestContext.self) }

    /// The image routes for a router with request context `Context`: GET and
    /// HEAD on every path below where they are mounted, 405 for other
    /// methods. With ``ImageRequestContext`` the route also reports what
    /// the access log prints.
    public func routes<Context: RequestContext>(context: Context.Type) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.get("**") { request, context in
            try await self.respond(to: request, context: context)
        }
        routes.head("**") { request, context in
            let response = try await self.respond(to: request, context: context)
            var headers = response.headers
            headers[.contentLength] = response.body.contentLength.map(String.init) ?? "0"
            return Response(status: response.status, headers: headers, body: ResponseBody())
        }
        for method in [HTTPRequest.Method.post, .put, .delete, .patch, .options] {
            routes.on("**", method: method) { _, _ -> Response in throw ServiceError.methodNotAllowed.cacheable(for: self.configuration.errorMaxAge) }
        }
        return routes
    }

    /// The image route's answer; every failure is a ``ServiceError`` with
    /// its status, cacheable for the error max-age.
    private func respond<Context: RequestContext>(to request: Request, context: Context) async throws(ServiceError) -> Response {
        // The rest of the path below the routes' mount point, as sent:
        // the signature signs it byte for byte.
        guard let matched = context.parameters[Parameters.recursiveCaptureKey] else {
            throw ServiceError(.notFound, "not found: image URLs are /{signature}/{options}/{source}")
        }
        let path = matched.base[matched.startIndex...]
        let report = (context as? ImageRequestContext)?.report
        do {
            if let dialect = configuration.thumbor,
                let thumborPath = dialect.thumborPath(in: path, host: request.head.authority, imgproxyEnabled: acceptsImgproxyURLs)
            {
                return try await thumborImage(request, path: thumborPath, dialect: dialect, report: report)
            }
            // `/info/...` cannot be an image URL: "info" is no signature.
            if path.hasPrefix("info/") {
                let prefix = matched.base[..<matched.base.index(matched.startIndex, offsetBy: 4)]
                return try await info(request, path: path.dropFirst(4), mountedAt: prefix, report: report)
            }
            return try await image(request, path: path, mountedAt: matched.base[..<matched.startIndex], report: report)
        } catch {
            throw error.cacheable(for: configuration.errorMaxAge)
        }
    }

    /// Whether imgproxy's URLs are answered at all: with a key, unsigned
    /// URLs, or allowed sizes. When they are not, thumbor's own the root.
    var acceptsImgproxyURLs: Bool { configuration.signing != nil || configuration.allowsUnsigned || !configuration.allowedSizes.isEmpty }

    // MARK: The image request, step by step

    private func image(_ request: Request, path rawPath: Substring, mountedAt prefix: Substring, report: ImageRequestReport?)
        async throws(ServiceError) -> Response
    {
        // 1-3. The path, its signature, its options, its source.
        let (read, source) = try readRequest(rawPath, mountedAt: prefix, report: report)
        let options = read.options

        // 4. Look in the result cache.
        let format = options.raw ? OutputFormat.jpegOrPNG : try OutputFormat(options.format, accept: request.headers[.accept] ?? "")
        let key = ResultKey(source: source, options: read.cacheKey, format: format, watermark: options.watermark.isEnabled ? watermark?.key : nil)

        // 5-7. Fetch, transform and store, once for every identical request in flight.
        let result = try await result(for: key, source: source, forwarding: request, report: report, production: .imgproxy(options, format: format))

        // 8. Answer: the image, or 304 when the client's copy is current.
        return answer(result, to: request, delivery: options.delivery(negotiated: options.format == .auto && !options.raw), source: source)
    }

    /// The steps every URL goes through before its source is looked at:
    /// take the path apart and check its signature on the path as sent,
    /// before any option is read; read the options (an unsigned URL may
    /// ask only for an allowed size); apply the source policy (its
    /// addresses are checked again at every connection).
    func readRequest(_ rawPath: Substring, mountedAt prefix: Substring, report: ImageRequestReport?) throws(ServiceError) -> (
        OptionsMemo.Entry, URL
    ) {
        let path: ImageURLPath
        do { path = try ImageURLPath(rawPath, presetsOnly: configuration.presetsOnly) } catch { throw ServiceError(error) }
        report?.record { $0.unsignedPath = prefix + "-" + path.signedPath }
        let needsAllowedSize = try verifySignature(path)
        let options = try readOptions(path)
        if needsAllowedSize { try checkAllowedSize(options.options) }
        let source: URL
        do { source = try configuration.sourcePolicy.check(url: path.source) } catch { throw ServiceError(error) }
        report?.record { $0.sourceHost = source.host }
        return (options, source)
    }

    /// The answer kept under `key` while it is fresh (a hit), else the one
    /// `production` makes from the source, once for every identical request
    /// in flight (or the stale one renewed, if the source has not changed).
    func result(for key: ResultKey, source: URL, forwarding request: Request, report: ImageRequestReport?, production: Production)
        async throws(ServiceError) -> EncodedResult
    {
        let forwarded = forwardedFields(of: request)
        let key = forwarded.isEmpty ? key : key.forwarding(forwarded)
        let kept = await results.cached(key)
        if let kept, ContinuousClock.now < kept.expires {
            metrics.resultCacheHit()
            report?.record { $0.cacheOutcome = .hit }
            return kept
        }
        // The shared work runs in a task of its own: its spans join the trace of the request that started it.
        let trace = ServiceContext.current
        let result = try await results.shared(key) { () throws(ServiceError) in
            try await TraceSpans.within(trace) { () throws(ServiceError) in
                // Another instance may have made it: one GET from the shared store, no decode.
                if let shared = await self.store?.fetch(key) {
                    await self.results.store(shared, forKey: key)
                    return shared
                }
                return try await self.makeResult(key, source: source, forwarded: forwarded, previous: kept, production: production)
            }.get()
        }
        report?.record { $0.cacheOutcome = kept?.etag == result.etag ? .revalidated : .miss }
        return result
    }

    /// The client's fields the operator forwards to sources, as the client sent them.
    func forwardedFields(of request: Request) -> HTTPFields {
        var fields = HTTPFields()
        for name in configuration.forwardedHeaders {
            for value in request.headers[values: name] { fields.append(HTTPField(name: name, value: value)) }
        }
        return fields
    }

    /// Whether `path`'s signature lets it through: `false` when it does,
    /// `true` when it is unsigned and may pass for an allowed size only.
    private func verifySignature(_ path: ImageURLPath) throws(ServiceError) -> Bool {
        if path.signature == "unsafe" {
            if configuration.allowsUnsigned { return false }
            if configuration.allowedSizes.isEmpty { throw ServiceError(.forbidden, "unsigned URLs are not accepted by this server") }
            return true
        }
        guard let signing = configuration.signing else {
            throw ServiceError(.forbidden, "this server has no signing keys: only unsigned (unsafe) URLs, if allowed")
        }
        guard signing.isValid(signature: path.signature, for: path.signedPath) else { throw ServiceError(.forbidden, "invalid signature") }
        return false
    }

    /// The options `path` asks for (in presets-only mode, its presets),
    /// then the format its source's extension names.
    private func readOptions(_ path: ImageURLPath) throws(ServiceError) -> OptionsMemo.Entry {
        do throws(OptionError) {
            let entry = try optionsMemo.entry(for: path.optionsText + "\u{0}" + (path.sourceExtension ?? "")) { () throws(OptionError) in
                try readOptions(afresh: path)
            }
            // A kept entry was read earlier: its expiry is checked again now.
            if let expires = entry.options.expires, expires > 0, expires < parser.now() {
                throw OptionError(option: "exp:\(expires)", reason: "the URL has expired", kind: .expired)
            }
            return entry
        } catch {
            throw ServiceError(error)
        }
    }

    /// The options `path` asks for, read now.
    private func readOptions(afresh path: ImageURLPath) throws(OptionError) -> ProcessingOptions {
        var options: ProcessingOptions
        if configuration.presetsOnly {
            options = try parser.options(presetNames: path.options.first.map { $0.split(separator: ":").map(String.init) } ?? [])
        } else {
            options = try parser.options(path.options)
        }
        if let name = path.sourceExtension, !options.raw {
            guard let format = ProcessingOptions.Format(name: name) else {
                throw OptionError(option: name, reason: "unknown format in the source's extension")
            }
            options.format = format
        }
        // Refused rather than ignored (as imgproxy does): an answer
        // without the watermark asked for could give away an image
        // meant to be marked.
        if options.watermark.isEnabled, watermark == nil {
            throw OptionError(option: "wm", reason: "this server has no watermark image (--watermark-path or --watermark-url)")
        }
        return options
    }

    private func checkAllowedSize(_ options: ProcessingOptions) throws(ServiceError) {
        guard !configuration.allowedSizes.contains(options.targetSize) else { return }
        let sizes = configuration.allowedSizes.map(\.description).sorted().joined(separator: ", ")
        throw ServiceError(.forbidden, "unsigned URLs are not accepted by this server (except for the sizes \(sizes))")
    }
}
