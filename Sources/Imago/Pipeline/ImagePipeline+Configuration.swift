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
        /// Default: JPEG (libjpeg-turbo) and PNG (libspng).
        public var decoders: [any ImageDecoding]
        /// Downloads running at once, across hosts. Default: 16.
        public var maximumConcurrentDownloads: Int
        /// Downloads running at once to one host. Default: 6, as browsers do.
        public var maximumConcurrentDownloadsPerHost: Int
        /// Decodes running at once. Default: the number of processors.
        public var maximumConcurrentDecodes: Int
        /// Threads for disk reads and writes. Default: 2.
        public var diskThreadCount: Int
        /// The most pixels an image header may declare. Default: 100 megapixels.
        public var maximumPixelCount: Int
        /// Where the pipeline logs (label "imago").
        public var logger: Logger

        /// A configuration with the documented defaults, overridable by argument.
        public init(
            dataLoader: (any DataLoading)? = nil,
            imageCache: (any ImageCaching)? = MemoryCache<String, Image>(),
            dataCache: (any DataCaching)? = nil,
            decoders: [any ImageDecoding]? = nil,
            maximumConcurrentDownloads: Int = 16,
            maximumConcurrentDownloadsPerHost: Int = 6,
            maximumConcurrentDecodes: Int = ProcessInfo.processInfo.activeProcessorCount,
            diskThreadCount: Int = 2,
            maximumPixelCount: Int = 100_000_000,
            logger: Logger = Logger(label: "imago")
        ) {
            self.dataLoader = dataLoader ?? HTTPDataLoader.shared
            self.imageCache = imageCache
            self.dataCache = dataCache
            self.decoders = decoders ?? [JPEGDecoder(), PNGDecoder()]
            self.maximumConcurrentDownloads = maximumConcurrentDownloads
            self.maximumConcurrentDownloadsPerHost = maximumConcurrentDownloadsPerHost
            self.maximumConcurrentDecodes = maximumConcurrentDecodes
            self.diskThreadCount = diskThreadCount
            self.maximumPixelCount = maximumPixelCount
            self.logger = logger
        }
    }
}
