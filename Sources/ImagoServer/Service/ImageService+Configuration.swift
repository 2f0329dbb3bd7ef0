import Foundation
import HTTPTypes
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
        /// Where and how thumbor URLs are answered; nil answers imgproxy URLs only.
        public var thumbor: ThumborDialect?
        /// Named option lists for `pr:name`; `default` applies to every URL.
        public var presets: Presets
        /// Whether URLs name presets only (`/{signature}/{preset}:{preset}/{source}`),
        /// as imgproxy's `IMGPROXY_ONLY_PRESETS`.
        public var presetsOnly: Bool
        /// Whether URLs may lower the source limits for their own source
        /// (`msr`, `msfs`, `maf`, `mafr`, `mrd`); else those are a 403.
        public var allowsSourceLimits: Bool
        /// The quality answers are encoded at when the URL names none. Default: 80.
        public var quality: Int
        /// The quality by format, over ``quality`` (`webp=79,avif=63`). Default: none.
        public var formatQuality: [ProcessingOptions.Format: Int]
        /// The longest side an answer may have, extension and padding
        /// included; larger ones are scaled down to it. Default: 8,192.
        public var maximumResultDimension: Int
        /// The image `wm` draws; nil answers `wm` with a 400.
        public var watermark: WatermarkSource?
        /// A factor on every watermark's opacity, as imgproxy's `IMGPROXY_WATERMARK_OPACITY`. Default: 1.
        public var watermarkOpacity: Double
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
        /// The folder `local:///path` sources are read under; nil refuses them.
        public var localRoot: String?
        /// The object storage `s3://bucket/key` sources come from; nil refuses them.
        public var objectStorage: ObjectStorage?
        /// Fields attached to http(s) sources by URL prefix.
        public var sourceHeaders: [SourceHeaders] = []
        /// The client's request fields passed on to sources (`Cookie`,
        /// `Authorization` only when listed; never `Host` or hop-by-hop
        /// fields). A request that forwards any is fetched past the source
        /// cache, and its answer is kept under those values.
        public var forwardedHeaders: [HTTPField.Name] = []
        /// `s3://bucket/prefix`: answers are kept there too, for every
        /// instance, in ``objectStorage`` (which must be set); nil for none.
        public var resultStore: URL?
        /// How long one request to the result store may take, connecting
        /// included, before the store counts as failing and is skipped.
        public var resultStoreTimeout: Duration = .seconds(5)

        public init(
            signing: URLSigning? = nil,
            allowsUnsigned: Bool = false,
            allowedSizes: Set<ImageSize> = [],
            sourcePolicy: SourcePolicy = SourcePolicy(),
            presets: Presets = Presets(),
            presetsOnly: Bool = false,
            allowsSourceLimits: Bool = false,
            quality: Int = 80,
            formatQuality: [ProcessingOptions.Format: Int] = [:],
            maximumResultDimension: Int = 8_192,
            watermark: WatermarkSource? = nil,
            watermarkOpacity: Double = 1,
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
            demo: DemoSite? = nil,
            thumbor: ThumborDialect? = nil
        ) {
            self.thumbor = thumbor
            self.signing = signing
            self.allowsUnsigned = allowsUnsigned
            self.allowedSizes = allowedSizes
            self.sourcePolicy = sourcePolicy
            self.presets = presets
            self.presetsOnly = presetsOnly
            self.allowsSourceLimits = allowsSourceLimits
            self.quality = quality
            self.formatQuality = formatQuality
            self.maximumResultDimension = maximumResultDimension
            self.watermark = watermark
            self.watermarkOpacity = watermarkOpacity
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

        /// Checks every field; the first one out of bounds is thrown, named.
        public func validate() throws(ConfigurationError) {
            try ConfigurationError.require(maxAge >= 0, "max-age \(maxAge): expected 0 or more seconds")
            try ConfigurationError.require(errorMaxAge >= 0, "error max-age \(errorMaxAge): expected 0 or more seconds")
            try ConfigurationError.require(sourceDiskLimit >= 1 << 20, "source disk limit \(sourceDiskLimit) bytes: expected 1 MiB or more")
            try ConfigurationError.require(resultDiskLimit >= 1 << 20, "result disk limit \(resultDiskLimit) bytes: expected 1 MiB or more")
            try ConfigurationError.require(maximumSourceSize > 0, "source size limit \(maximumSourceSize) bytes: expected 1 or more")
            try ConfigurationError.require(maximumPixelCount > 0, "pixel limit \(maximumPixelCount): expected 1 or more")
            try ConfigurationError.require(maximumFrameCount > 0, "frame limit \(maximumFrameCount): expected 1 or more")
            try ConfigurationError.require(sourceTimeout > .zero, "source timeout \(sourceTimeout): expected more than 0")
            try ConfigurationError.require(
                maximumConcurrentTransformations > 0, "concurrency \(maximumConcurrentTransformations): expected 1 or more")
            try ConfigurationError.require(queueCapacity >= 0, "queue length \(queueCapacity): expected 0 or more")
            try ConfigurationError.require(queueTimeout >= .zero, "queue timeout \(queueTimeout): expected 0 or more")
            try ConfigurationError.require(resultCacheSize >= 0, "result memory \(resultCacheSize) bytes: expected 0 or more")
            try ConfigurationError.require(resultLifetime >= .zero, "result lifetime \(resultLifetime): expected 0 or more")
            try ConfigurationError.require((1...100).contains(quality), "quality \(quality): expected 1 to 100")
            for (format, quality) in formatQuality {
                try ConfigurationError.require((1...100).contains(quality), "\(format.rawValue) quality \(quality): expected 1 to 100")
            }
            try ConfigurationError.require(
                (1...ProcessingOptions.largestSide).contains(maximumResultDimension),
                "maximum result dimension \(maximumResultDimension): expected 1 to \(ProcessingOptions.largestSide)")
            try watermark?.validate()
            try ConfigurationError.require((0...1).contains(watermarkOpacity), "watermark opacity \(watermarkOpacity): expected 0 to 1")
            try ConfigurationError.require(decodeMemoryBudget > 0, "decode memory \(decodeMemoryBudget) bytes: expected 1 or more")
            if let resultStore {
                try ConfigurationError.require(
                    resultStore.scheme == "s3" && !(resultStore.host ?? "").isEmpty, "result store \(resultStore): expected s3://bucket/prefix")
                try ConfigurationError.require(objectStorage != nil, "the result store needs object storage (--s3, --s3-endpoint)")
            }
            if let localRoot {
                try ConfigurationError.require(LocalFileLoader.isFolder(localRoot), "local root \(localRoot): not a folder")
            }
        }
    }
}
