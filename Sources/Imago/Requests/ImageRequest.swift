import Foundation
import ImagoConcurrency

/// What to load: a URL (or a key and a closure that fetches the bytes) and how.
///
/// ```swift
/// var request = ImageRequest(url: url, priority: .high)
/// request.targetSize = ImageSize(width: 256, height: 256)
/// request.cachePolicy = CachePolicy(read: .all, write: .memory)
/// let response = try await pipeline.image(for: request)
/// ```
public struct ImageRequest: Sendable {
    /// Where the encoded bytes come from.
    public enum Source: Sendable {
        /// Downloaded through the pipeline's ``DataLoading`` loader.
        case url(URL)
        /// Produced by a closure (a POST, a signed request, a file), cached under `key`.
        case provider(key: String, load: @Sendable () async throws -> Data)
    }

    /// Where the encoded bytes come from.
    public let source: Source
    /// The key the encoded data is cached under (memory keys add the decoding
    /// options). Computed once: lookups are on the hot path.
    public let cacheKey: String
    /// Extra HTTP fields sent with a URL download, on every redirect hop
    /// (credentials only until the chain leaves the URL's origin).
    public var headers: HTTPFields
    /// Fields sent only to the URLs under their prefix, at every redirect
    /// hop: a token for one origin, a client's cookie for the source it named.
    public var scopedHeaders: [ScopedFields] = []
    /// Which caches are read and written for this request.
    public var cachePolicy: CachePolicy
    /// How the request weighs cached data against the network. Default: ``NetworkPolicy/useCache``.
    public var networkPolicy: NetworkPolicy
    /// How urgent the request is; can change while it runs through ``ImageTask/priority``.
    public var priority: Priority
    /// The size the image will be displayed at, in pixels; decoders scale down
    /// while decoding where the format allows. `nil` decodes at full size.
    public var targetSize: ImageSize? { didSet { updateImageKey() } }
    /// How the image is scaled to ``targetSize``: to fill it (the default)
    /// or to fit inside it. Never enlarged.
    public var contentMode: ContentMode { didSet { updateImageKey() } }
    /// What is done to the decoded image, in order (resize, crop, round,
    /// blur, ...). Their identifiers are part of the image's cache key.
    public var processors: [any ImageProcessing] { didSet { updateImageKey() } }
    /// Whether a thumbnail the file embeds (HEIC, AVIF) is decoded instead
    /// of the main image, when there is one. Default: `false`.
    public var prefersEmbeddedThumbnail = false { didSet { updateImageKey() } }
    /// Whether colours are converted to sRGB from the profile the file
    /// declares, as browsers show them. Default: `true`. With `false` the
    /// pixels are as stored, for an encoder to write with the source's
    /// profile (``ImageMetadata/iccProfile``).
    public var convertsToSRGB = true { didSet { updateImageKey() } }
    /// Which page of a multi-page file (TIFF), or which frame of an
    /// animation (GIF, WebP, AVIF), counted from 0, is the image: a still.
    /// Default: 0, the first page, or the animation from its first frame.
    /// A page the file does not have fails the decode with
    /// ``ImageDecodingError/Code/noSuchPage(page:)``.
    public var page = 0 { didSet { updateImageKey() } }
    /// The key of the decoded image: made when the request is made and when
    /// one of its fields changes, not on each lookup.
    private(set) var imageKey: ImageCacheKey

    /// Creates a request for a URL.
    ///
    /// - Parameter cacheKey: the key the data is cached under instead of the
    ///   full URL (for example the URL without a rotating token, see
    ///   ``cacheKey(for:removingQueryItems:)``). By default the whole URL,
    ///   query included, is the key.
    public init(
        url: URL,
        headers: HTTPFields = [:],
        cacheKey: String? = nil,
        cachePolicy: CachePolicy = .default,
        networkPolicy: NetworkPolicy = .useCache,
        priority: Priority = .normal,
        targetSize: ImageSize? = nil,
        contentMode: ContentMode = .fill,
        processors: [any ImageProcessing] = []
    ) {
        self.init(
            source: .url(url), cacheKey: cacheKey ?? url.absoluteString, headers: headers, cachePolicy: cachePolicy,
            networkPolicy: networkPolicy, priority: priority, targetSize: targetSize, contentMode: contentMode, processors: processors
        )
    }

    /// Creates a request whose bytes come from `load`, cached under `key`.
    public init(
        key: String,
        cachePolicy: CachePolicy = .default,
        networkPolicy: NetworkPolicy = .useCache,
        priority: Priority = .normal,
        targetSize: ImageSize? = nil,
        contentMode: ContentMode = .fill,
        processors: [any ImageProcessing] = [],
        load: @escaping @Sendable () async throws -> Data
    ) {
        self.init(
            source: .provider(key: key, load: load), cacheKey: key, headers: [:], cachePolicy: cachePolicy,
            networkPolicy: networkPolicy, priority: priority, targetSize: targetSize, contentMode: contentMode, processors: processors
        )
    }

    private init(
        source: Source, cacheKey: String, headers: HTTPFields, cachePolicy: CachePolicy, networkPolicy: NetworkPolicy,
        priority: Priority, targetSize: ImageSize?, contentMode: ContentMode, processors: [any ImageProcessing]
    ) {
        self.source = source
        self.cacheKey = cacheKey
        self.headers = headers
        self.cachePolicy = cachePolicy
        self.networkPolicy = networkPolicy
        self.priority = priority
        self.targetSize = targetSize
        self.contentMode = contentMode
        self.processors = processors
        imageKey = ImageCacheKey("")
        updateImageKey()
    }

    /// The URL, for a URL request.
    public var url: URL? {
        if case .url(let url) = source { return url }
        return nil
    }

    private mutating func updateImageKey() {
        imageKey = ImageCacheKey(request: self)
    }

    /// The key its image fetch is shared under.
    var imageFetchKey: ImageFetchKey { ImageFetchKey(image: imageKey, networkPolicy: networkPolicy) }

    /// The key its download is shared under.
    var dataFetchKey: DataFetchKey {
        DataFetchKey(dataKey: cacheKey, isReload: networkPolicy == .reload, headers: headers, scopedHeaders: scopedHeaders)
    }

    /// The cache directives of the request's fields (Cache-Control, else
    /// Pragma); `nil` without fields, the usual case, so that nothing is parsed.
    var cacheDirectives: CacheControl? { headers.isEmpty ? nil : CacheControl(request: headers) }

    /// The network policy in effect under `directives`: ``networkPolicy``,
    /// or `.cacheOnly` when they say `only-if-cached`.
    func networkPolicy(under directives: CacheControl?) -> NetworkPolicy {
        directives?.onlyIfCached == true ? .cacheOnly : networkPolicy
    }

    /// The network policy in effect under the request's own fields.
    var effectiveNetworkPolicy: NetworkPolicy { networkPolicy(under: cacheDirectives) }

    /// A cache key for `url` without the named query items: for URLs that
    /// carry a rotating token (`?token=...`) so that each token does not
    /// make a new cache entry. Other query items and their order are kept.
    public static func cacheKey(for url: URL, removingQueryItems names: Set<String>) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let items = components.queryItems
        else { return url.absoluteString }
        let kept = items.filter { !names.contains($0.name) }
        components.queryItems = kept.isEmpty ? nil : kept
        return components.string ?? url.absoluteString
    }
}

extension ImageRequest {
    /// How urgent a request is. Queued downloads and decodes start highest
    /// priority first. (One type with the pools' and semaphores' priority.)
    public typealias Priority = WorkPriority

    /// Which cache tiers a request reads and which it writes, chosen separately.
    public struct CachePolicy: Sendable, Hashable {
        /// The tiers looked up before loading.
        public var read: CacheTiers
        /// The tiers a loaded result is stored in.
        public var write: CacheTiers

        /// Creates a policy.
        public init(read: CacheTiers, write: CacheTiers) {
            self.read = read
            self.write = write
        }

        /// Read and write memory and disk.
        public static let `default` = CachePolicy(read: .all, write: .all)
        /// Memory only: neither read nor write the disk cache.
        public static let memoryOnly = CachePolicy(read: .memory, write: .memory)
        /// Disk only: decoded images are not kept in memory.
        public static let diskOnly = CachePolicy(read: .disk, write: .disk)
        /// No caching at all: always load, store nothing.
        public static let none = CachePolicy(read: [], write: [])
    }

    /// How a request weighs cached data against the network.
    public enum NetworkPolicy: String, Sendable, Hashable {
        /// Memory, then disk while the entry is fresh by HTTP's rules (see
        /// ``ImagePipeline/DiskCachePolicy``), then a conditional or full download.
        case useCache
        /// Ignore cached images and data: download again, then store the result.
        case reload
        /// Never touch the network: serve what memory or disk holds, stale or
        /// not, or fail with ``ImagePipeline/Error/notCached(key:)``.
        case cacheOnly
        /// Skip the memory cache and validate the disk entry with the server
        /// (If-None-Match / If-Modified-Since) even if it is fresh.
        case revalidate

        /// Whether a memory hit may answer the request.
        var readsMemory: Bool { self == .useCache || self == .cacheOnly }
    }

    /// A set of cache tiers.
    public struct CacheTiers: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The in-memory cache of decoded images.
        public static let memory = CacheTiers(rawValue: 1 << 0)
        /// The on-disk cache of encoded data.
        public static let disk = CacheTiers(rawValue: 1 << 1)
        /// Both tiers.
        public static let all: CacheTiers = [.memory, .disk]
    }
}

extension ImageRequest: ExpressibleByStringLiteral {
    /// Creates a request from a URL string literal; an invalid literal gives a
    /// request that fails with ``ImagePipeline/Error/invalidRequest(key:reason:)``.
    public init(stringLiteral value: String) {
        if let url = URL(string: value) {
            self.init(url: url)
        } else {
            self.init(key: value) { throw URLError(.badURL) }
        }
    }
}
