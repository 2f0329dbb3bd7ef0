import Foundation

/// The disk tier's part in an image fetch: a fresh processed image as it
/// is, else the data entry judged by its HTTP fields, decoded when it may be
/// served. Runs on a decode thread (disk reads block).
struct ReadDiskStage {
    /// What the read found.
    enum Outcome: Sendable {
        /// Nothing usable: no entry, or one for other Vary values or with damaged metadata.
        case miss
        /// An entry that needs the server's word before it is used.
        case stale(StoredEntry)
        /// A stored answer that is no image (a 404, say), served as that error.
        case failed(ImagePipeline.Error)
        /// Served from disk (fresh, or stale where that is allowed): decoded, or failed to.
        case decoded(Result<Image, ImagePipeline.RenderFailure>, ImageResponse.Freshness, Int, ImageResponse.Timings)
    }

    private let pipeline: ImagePipeline
    private let request: ImageRequest
    private let dataCache: any DataCaching

    /// The stage, if the request reads the disk and the index may hold its
    /// data or its processed image (asked in memory, without I/O); else nil.
    init?(_ request: ImageRequest, pipeline: ImagePipeline) {
        guard request.networkPolicy != .reload, request.cachePolicy.read.contains(.disk),
            let dataCache = pipeline.configuration.dataCache
        else { return nil }
        let processedKey = StoreStage.processedImageStore(for: request, in: pipeline)?.key
        guard dataCache.mayContainData(forKey: DiskKey.data(request.cacheKey)) || processedKey.map(dataCache.mayContainData(forKey:)) == true
        else { return nil }
        self.pipeline = pipeline
        self.request = request
        self.dataCache = dataCache
    }

    func run() -> Outcome {
        let readStart = ContinuousClock.now
        let processedStore = StoreStage.processedImageStore(for: request, in: pipeline)
        let rules = pipeline.cacheRules
        // A fresh processed image is the result as it is: no scaling, no processors.
        if let processedStore, let processed = dataCache.cachedData(forKey: processedStore.key),
            case .serve(.fresh, _) = rules.use(processed, for: request)
        {
            let decodeStart = ContinuousClock.now
            let decoded = DecodeStage(request, pipeline: pipeline, scaled: false).run(processed.data)
            let timings = ImageResponse.Timings(diskRead: decodeStart - readStart, decode: ContinuousClock.now - decodeStart)
            if case .success = decoded { return .decoded(decoded, .fresh, processed.data.count, timings) }
            StoreStage.remove(processedStore.key, from: dataCache, logger: pipeline.logger)
        }
        guard let cached = dataCache.cachedData(forKey: DiskKey.data(request.cacheKey)) else { return .miss }
        switch rules.use(cached, for: request) {
        case .skip: return .miss
        case .revalidate(let entry): return .stale(entry)
        case .serve(let freshness, let entry):
            if let error = request.imageStatusError(entry.statusCode) { return .failed(error) }
            let decodeStart = ContinuousClock.now
            let decoded = DecodeStage(request, pipeline: pipeline).run(cached.data).flatMap(ProcessStage(request.processors).run)
            let timings = ImageResponse.Timings(diskRead: decodeStart - readStart, decode: ContinuousClock.now - decodeStart)
            if case .fresh = freshness { processedStore?.store(decoded, metadata: cached.metadata, logger: pipeline.logger) }
            return .decoded(decoded, freshness, cached.data.count, timings)
        }
    }
}
