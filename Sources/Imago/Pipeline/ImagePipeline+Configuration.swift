import Foundation
import Logging

extension ImagePipeline {
    /// What a pipeline is built from: its caches, loader, decoders and limits.
    ///
    /// ```swift
    /// var configuration = ImagePipeline.Configuration()
    /// configuration.dataCache = try DiskCache(path: "/var/cache/myapp/images")
    /// configuration.maximumConcurrentDownloadsPerHost = 4
    /// let pipeline = ImagePipeline(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Loads data for URL requests. Default: ``HTTPDataLoader/shared``.
        public var dataLoader: any DataLoading
        /// The memory tier of decoded images; `nil` keeps nothing in memory.
        /// Default: a ``MemoryCache`` with its default limits.
        public var imageCache: (any ImageCaching)?
        /// The disk tier of encoded data; `nil` (the default) keeps nothing on disk.
        public var dataCache: (any DataCaching)?
        /// Decoders, asked in order; the first that handles the sniffed format decodes.
        /// Default: JPEG (libjpeg-turbo), PNG (libspng), WebP (libwebp), GIF
        /// (giflib), AVIF (libavif), HEIC (libheif), JPEG XL (libjxl), TIFF
        /// (libtiff), BMP and ICO (Imago's own), and SVG (librsvg, rendered
        /// at the request's target size, see ``SVGDecoder``).
        public var decoders: [any ImageDecoding]
        /// Downloads running at once, across hosts. Default: 16.
        public var maximumConcurrentDownloads: Int
        /// Downloads running at once to one host. Default: 6, as browsers do.
        public var maximumConcurrentDownloadsPerHost: Int
        /// Threads that read disk entries and decode them, one job per image:
        /// at most this many reads and decodes run at once. Default: the
        /// number of processors.
        public var maximumConcurrentDecodes: Int
        /// Threads for the rest of the disk work: partial downloads,
        /// ``ImagePipeline/data(for:)`` reads and stores, and the ``ImagePipeline/cache``
        /// API's disk calls. Default: 2.
        public var diskThreadCount: Int
        /// The most pixels an image header may declare. Default: 100 megapixels.
        public var maximumPixelCount: Int
        /// The most frames an animated image may have. Default: 1,000.
        public var maximumFrameCount: Int
        /// Bytes of decoded pixels that ``ImagePipeline/render(_:as:)`` and
        /// its encoding forms may hold at once, each render's estimated
        /// from its header before it starts (the pixel limit's worth when
        /// the header does not tell); a render that does not fit waits,
        /// highest priority first. Default: nil, no limit.
        public var decodeMemoryLimit: Int?
        /// When failed downloads are tried again. Default: ``RetryPolicy/init(maximumAttempts:initialDelay:maximumDelay:maximumRetryAfter:)``
        /// with its defaults (3 attempts, backoff from 250 ms).
        public var retryPolicy: RetryPolicy
        /// How the disk tier decides whether a stored response may be used.
        /// Default: ``DiskCachePolicy/http``.
        public var diskCachePolicy: DiskCachePolicy
        /// What the disk tier keeps: the downloaded data, the processed
        /// images (resized to a target size or run through processors),
        /// or both. Default: ``DiskStorage/originalData``.
        public var diskStorage: DiskStorage
        /// How processed images are encoded for the disk tier. Default: lossy WebP at quality 80.
        public var processedImageEncoder: any ImageEncoding
        /// The longest heuristic freshness (10% of the time since
        /// Last-Modified) given to a response without explicit expiry. Default: one day.
        public var maximumHeuristicLifetime: Duration
        /// Whether a stale disk entry stands in when the server cannot be
        /// reached (timeout, connection failure, 500/502/503/504), unless the
        /// response said `no-cache` or `must-revalidate`. The response says so
        /// in ``ImageResponse/freshness``. Default: `true`, so an app keeps
        /// showing what it has when it goes offline.
        public var servesStaleWhenOffline: Bool
        /// Whether the memory cache gives memory back when Linux runs short
        /// (the process-wide ``MemoryPressureMonitor``: half at the first
        /// pressure event, everything if it persists). Default: `true`.
        public var trimsMemoryOnPressure: Bool
        /// The wall clock HTTP freshness is measured by. Tests replace it.
        public var currentDate: @Sendable () -> Date
        /// Where the pipeline logs (label "imago").
        public var logger: Logger

        /// A configuration with the documented defaults, overridable by argument.
        public init(
            dataLoader: (any DataLoading)? = nil,
            imageCache: (any ImageCaching)? = MemoryCache<ImageCacheKey, Image>(),
            dataCache: (any DataCaching)? = nil,
            decoders: [any ImageDecoding]? = nil,
            maximumConcurrentDownloads: Int = 16,
            maximumConcurrentDownloadsPerHost: Int = 6,
            maximumConcurrentDecodes: Int = ProcessInfo.processInfo.activeProcessorCount,
            diskThreadCount: Int = 2,
            maximumPixelCount: Int = 100_000_000,
            maximumFrameCount: Int = 1_000,
            decodeMemoryLimit: Int? = nil,
            retryPolicy: RetryPolicy = RetryPolicy(),
            diskCachePolicy: DiskCachePolicy = .http,
            diskStorage: DiskStorage = .originalData,
            processedImageEncoder: any ImageEncoding = WebPEncoder(),
            maximumHeuristicLifetime: Duration = .seconds(86_400),
            servesStaleWhenOffline: Bool = true,
            trimsMemoryOnPressure: Bool = true,
            currentDate: @escaping @Sendable () -> Date = { Date() },
            logger: Logger = Logger(label: "imago")
        ) {
            self.dataLoader = dataLoader ?? HTTPDataLoader.shared
            self.imageCache = imageCache
            self.dataCache = dataCache
            self.decoders =
                decoders ?? [
                    JPEGDecoder(), PNGDecoder(), WebPDecoder(), GIFDecoder(), AVIFDecoder(), HEIFDecoder(), JXLDecoder(), TIFFDecoder(), BMPDecoder(),
                    ICODecoder(), SVGDecoder(),
                ]
            self.maximumConcurrentDownloads = maximumConcurrentDownloads
            self.maximumConcurrentDownloadsPerHost = maximumConcurrentDownloadsPerHost
            self.maximumConcurrentDecodes = maximumConcurrentDecodes
            self.diskThreadCount = diskThreadCount
            self.maximumPixelCount = maximumPixelCount
            self.maximumFrameCount = maximumFrameCount
            self.decodeMemoryLimit = decodeMemoryLimit
            self.retryPolicy = retryPolicy
            self.diskCachePolicy = diskCachePolicy
            self.diskStorage = diskStorage
            self.processedImageEncoder = processedImageEncoder
            self.maximumHeuristicLifetime = maximumHeuristicLifetime
            self.servesStaleWhenOffline = servesStaleWhenOffline
            self.trimsMemoryOnPressure = trimsMemoryOnPressure
            self.currentDate = currentDate
            self.logger = logger
        }

        /// Checks the limits: each at least 1 where a pipeline needs one, the
        /// heuristic lifetime not negative, and the loader's own configuration
        /// when it is an ``HTTPDataLoader``.
        public func validate() throws(ConfigurationError) {
            let counts = [
                ("concurrent downloads", maximumConcurrentDownloads), ("concurrent downloads per host", maximumConcurrentDownloadsPerHost),
                ("concurrent decodes", maximumConcurrentDecodes), ("disk threads", diskThreadCount), ("pixel limit", maximumPixelCount),
                ("frame limit", maximumFrameCount), ("retry attempts", retryPolicy.maximumAttempts),
            ]
            for (name, count) in counts { try ConfigurationError.require(count > 0, "\(name) \(count): expected 1 or more") }
            if let decodeMemoryLimit {
                try ConfigurationError.require(decodeMemoryLimit > 0, "decode memory \(decodeMemoryLimit) bytes: expected 1 or more")
            }
            try ConfigurationError.require(maximumHeuristicLifetime >= .zero, "heuristic lifetime \(maximumHeuristicLifetime): expected 0 or more")
            try (dataLoader as? HTTPDataLoader)?.configuration.validate()
        }
    }

    /// How the disk tier decides whether a stored response may be used.
    ///
    /// With ``http`` (the default) an entry is served while it is fresh by
    /// RFC 9111's rules (max-age, Expires, Age, Date, or 10% of the time since
    /// Last-Modified), revalidated with If-None-Match / If-Modified-Since when
    /// stale, and never written if the response said `no-store` or `Vary: *`.
    /// With ``ignoreHTTPHeaders`` every successful response is stored and
    /// served until the disk cache's own ``DiskCache/Configuration/maxAge``
    /// removes it, as the seeds' apps did. Entries stored through
    /// ``ImagePipeline/cache`` carry no HTTP metadata and are always served.
    public enum DiskCachePolicy: Sendable, Equatable {
        /// Follow the response's caching headers, as a private HTTP cache.
        case http
        /// Keep every response until the disk cache's age limit, whatever its headers say.
        case ignoreHTTPHeaders
    }

    /// What the disk tier keeps for a request whose image is processed.
    ///
    /// Processed images cost a re-encode but make a thumbnail grid start from
    /// small files; the original data lets other sizes be made without a
    /// download. A request without a target size or processors always
    /// stores its data. Processed entries carry the original's HTTP
    /// metadata: they are used only while it is fresh, then made again
    /// from the original (after revalidating it). Animated images are never
    /// stored processed.
    public struct DiskStorage: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The bytes as downloaded.
        public static let originalData = DiskStorage(rawValue: 1 << 0)
        /// The processed image, encoded with ``Configuration/processedImageEncoder``.
        public static let processedImages = DiskStorage(rawValue: 1 << 1)
        /// Both.
        public static let all: DiskStorage = [.originalData, .processedImages]
    }
}
