import Foundation
import Imago
import ImagoCaching
import NIOCore

extension ImageService {
    /// What the service is started with; `imago serve` reads it from flags
    /// and `IMAGO_*` environment variables.
    public struct Configuration: Sendable {
        /// The keys that sign URLs; nil accepts no signed URL.
        public var signing: URLSigning?
        /// Whether unsigned URLs (signature segment `unsafe`) are served.
        public var allowsUnsigned: Bool
        /// Output boxes (width x height, after the dpr) unsigned URLs may
        /// ask for even when ``allowsUnsigned`` is off: a lighter guard than
        /// signing against requests for arbitrary sizes.
        public var allowedSizes: Set<ImageSize>
        /// Which sources may be fetched.
        public var sourcePolicy: SourcePolicy
        /// Named option lists for `p:name`.
        public var presets: [String: [Substring]]
        /// Where sources and encoded answers are cached on disk (`sources/`,
        /// `results/`); nil keeps answers in memory only and sources nowhere.
        public var cacheFolder: String?
        /// Which fetched sources go into `sources/`. Default: a source's
        /// second fetch (among the last 65,536 new sources): a source made
        /// into one answer only costs no write and evicts nothing, and one
        /// made into several is fetched twice before it is kept.
        public var sourceAdmission: DiskCache.Admission
        /// The most bytes `sources/` may take; least recently used sources
        /// go first. Default: 1 GiB.
        public var sourceDiskLimit: Int
        /// The most bytes `results/` may take. Default: 1 GiB.
        public var resultDiskLimit: Int
        /// `Cache-Control: max-age` of images, in seconds. Default: one day.
        public var maxAge: Int
        /// `Cache-Control: max-age` of errors, in seconds. Default: 10.
        public var errorMaxAge: Int
        /// The largest source body, refused while it streams. Default: 50 MiB.
        public var maximumSourceSize: Int
        /// The most pixels a source header may declare. Default: 50 megapixels.
        public var maximumPixelCount: Int
        /// The most frames an animated source may have. Default: 1,000.
        public var maximumFrameCount: Int
        /// A source's whole download. Default: 30 s.
        public var sourceTimeout: Duration
        /// Transformations (download, decode, process, encode) running at
        /// once. Default: the number of processors.
        public var maximumConcurrentTransformations: Int
        /// Requests waiting for a transformation slot; beyond them, 429.
        /// Default: 64.
        public var queueCapacity: Int
        /// The longest wait for a slot before a 503. Default: 10 s.
        public var queueTimeout: Duration
        /// The memory kept for encoded answers, in bytes. Default: the
        /// memory cache's default (a fifth of the memory budget, at most 512 MiB).
        public var resultCacheSize: Int
        /// How long an encoded answer is served before it is made again
        /// from the source (under the source's HTTP rules). Default: 1 hour.
        public var resultLifetime: Duration
        /// Bytes of decoded pixels in flight at once, estimated from each
        /// source's header before its decode starts; a decode that does
        /// not fit waits. Default: a quarter of the process's ``MemoryBudget``.
        public var decodeMemoryBudget: Int
        /// The demo's pages (`/` and `/demo/N`); nil outside the demo.
        public var demo: DemoSite?

        public init(
            signing: URLSigning? = nil,
            allowsUnsigned: Bool = false,
            allowedSizes: Set<ImageSize> = [],
            sourcePolicy: SourcePolicy = SourcePolicy(),
            presets: [String: [Substring]] = [:],
            cacheFolder: String? = nil,
            sourceAdmission: DiskCache.Admission = .secondStore(window: 65_536),
            sourceDiskLimit: Int = 1 << 30,
            resultDiskLimit: Int = 1 << 30,
            maxAge: Int = 86_400,
            errorMaxAge: Int = 10,
            maximumSourceSize: Int = 50 << 20,
            maximumPixelCount: Int = 50_000_000,
            maximumFrameCount: Int = 1_000,
            sourceTimeout: Duration = .seconds(30),
            maximumConcurrentTransformations: Int = ProcessInfo.processInfo.activeProcessorCount,
            queueCapacity: Int = 64,
            queueTimeout: Duration = .seconds(10),
            resultCacheSize: Int = MemoryCache<String, Data>.Configuration.defaultCostLimit,
            resultLifetime: Duration = .seconds(3_600),
            decodeMemoryBudget: Int = Int(min(MemoryBudget.current.bytes / 4, UInt64(Int.max))),
            demo: DemoSite? = nil
        ) {
            self.signing = signing
            self.allowsUnsigned = allowsUnsigned
            self.allowedSizes = allowedSizes
            self.sourcePolicy = sourcePolicy
            self.presets = presets
            self.cacheFolder = cacheFolder
            self.sourceAdmission = sourceAdmission
            self.sourceDiskLimit = sourceDiskLimit
            self.resultDiskLimit = resultDiskLimit
            self.maxAge = maxAge
            self.errorMaxAge = errorMaxAge
            self.maximumSourceSize = maximumSourceSize
            self.maximumPixelCount = maximumPixelCount
            self.maximumFrameCount = maximumFrameCount
            self.sourceTimeout = sourceTimeout
            self.maximumConcurrentTransformations = maximumConcurrentTransformations
            self.queueCapacity = queueCapacity
            self.queueTimeout = queueTimeout
            self.resultCacheSize = resultCacheSize
            self.resultLifetime = resultLifetime
            self.decodeMemoryBudget = decodeMemoryBudget
            self.demo = demo
        }
    }
}

/// A request as the service sees it: the path still percent-encoded, as sent.
public struct ServiceRequest: Sendable {
    public var method: String
    public var path: String
    public var headers: [(String, String)]

    public init(method: String = "GET", path: String, headers: [(String, String)] = []) {
        self.method = method
        self.path = path
        self.headers = headers
    }

    /// The first header named `name`, case-insensitively.
    public func header(_ name: String) -> String? {
        // Lengths first: the names are parsed for a likely match only.
        headers.first { $0.0.utf8.count == name.utf8.count && HTTPField.Name($0.0) == HTTPField.Name(name) }?.1
    }
}

/// What the service answers.
public struct ServiceResponse: Sendable {
    /// Where an image answer came from, for the access log.
    public enum CacheOutcome: String, Sendable {
        /// The result cache had a fresh answer.
        case hit
        /// The source came back unchanged and the kept answer was renewed.
        case revalidated
        /// The answer was made from the source (or joined the request making it).
        case miss
    }

    public var status: Int
    public var headers: [(String, String)]
    /// The body as it is sent; an image answer's is the result cache's own
    /// buffer, shared, never copied per answer.
    public var bytes: ByteBuffer
    /// For image answers: where the answer came from; nil for errors and other routes.
    public var cacheOutcome: CacheOutcome?

    /// The body as `Data` (a copy).
    public var body: Data { Data(bytes.readableBytesView) }

    public init(status: Int, headers: [(String, String)], body: Data, cacheOutcome: CacheOutcome? = nil) {
        self.init(status: status, headers: headers, bytes: ByteBuffer(bytes: body), cacheOutcome: cacheOutcome)
    }

    public init(status: Int, headers: [(String, String)], bytes: ByteBuffer, cacheOutcome: CacheOutcome? = nil) {
        self.status = status
        self.headers = headers
        self.bytes = bytes
        self.cacheOutcome = cacheOutcome
    }

    /// The first header named `name`, case-insensitively.
    public func header(_ name: String) -> String? {
        // Lengths first: the names are parsed for a likely match only.
        headers.first { $0.0.utf8.count == name.utf8.count && HTTPField.Name($0.0) == HTTPField.Name(name) }?.1
    }

    /// A plain-text error, cacheable for `maxAge` seconds.
    static func error(_ status: Int, _ message: String, maxAge: Int, extraHeaders: [(String, String)] = []) -> ServiceResponse {
        ServiceResponse(
            status: status,
            headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "public, max-age=\(maxAge)")] + extraHeaders,
            body: Data((message + "\n").utf8)
        )
    }

    /// The answer to HEAD: the same status and headers, the length the body would have.
    func withoutBody() -> ServiceResponse {
        var copy = self
        copy.headers.append(("Content-Length", String(bytes.readableBytes)))
        copy.bytes = ByteBuffer()
        return copy
    }
}

/// A failure with the status it is answered with.
struct ServiceError: Error {
    var status: Int
    var message: String
    var headers: [(String, String)] = []

    init(status: Int, message: String, headers: [(String, String)] = []) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    init(refusal: SourceRefusal) {
        switch refusal {
        case .badURL(let text): self.init(status: 400, message: "bad source: \(text)")
        case .notAllowed(let text), .refusedAddress(let text): self.init(status: 403, message: "source refused: \(text)")
        case .unresolvable(let text): self.init(status: 502, message: "source unreachable: \(text)")
        }
    }

    /// The status a pipeline failure is answered with: the source's own
    /// 404 or 410, 413 for what is too large, 415 for what is not an image,
    /// 422 for an image that does not decode, 502 and 504 for a source that
    /// fails or times out. Never 500.
    init(_ error: ImagePipeline.Error) {
        switch error {
        case .invalidRequest(_, let reason): self.init(status: 400, message: "bad source: \(reason)")
        case .sourceRefused(_, let reason): self.init(status: 403, message: "source refused: \(reason)")
        case .httpStatus(let code, let url) where code == 404 || code == 410:
            self.init(status: code, message: "the source answered \(code): \(url.absoluteString)")
        case .httpStatus(let code, let url): self.init(status: 502, message: "the source answered \(code): \(url.absoluteString)")
        case .network(let url, let underlying) where underlying.code == .timedOut:
            self.init(status: 504, message: "the source timed out: \(url.absoluteString)")
        case .network(_, let underlying): self.init(status: 502, message: "the source failed: \(underlying)")
        case .dataTooLarge(_, let limit): self.init(status: 413, message: "the source is larger than \(limit) bytes")
        case .decodingFailed(_, let underlying):
            switch underlying.code {
            case .unsupportedFormat: self.init(status: 415, message: "the source is not an image: \(underlying)")
            case .tooManyPixels, .tooManyFrames: self.init(status: 413, message: "the source is too large: \(underlying)")
            case .corrupt: self.init(status: 422, message: "the source does not decode: \(underlying)")
            }
        case .processingFailed(_, let processor): self.init(status: 422, message: "processing failed: \(processor)")
        case .dataProviderFailed(_, let underlying): self.init(status: 502, message: "the source failed: \(underlying)")
        case .notCached: self.init(status: 504, message: "the source is not cached and may not be fetched")
        case .cancelled: self.init(status: 503, message: "the request was cancelled")
        }
    }
}
