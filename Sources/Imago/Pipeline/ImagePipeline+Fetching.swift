import Foundation
import Logging
import Synchronization

/// The shared image fetches: one per image and network policy.
typealias ImageFetches = CoalescingPool<ImageFetchKey, FetchedImage, ImagePipeline.Error>
/// The shared downloads: one per data key (a reload has its own).
typealias DataFetches = CoalescingPool<DataFetchKey, FetchedData, ImagePipeline.Error>

/// What a shared data fetch produces: the bytes (downloaded, or the disk
/// entry a 304 confirmed or a failure let stand in), how long they took, and
/// the right to store them, which the first waiter to decode them takes.
struct FetchedData: Sendable {
    var data: Data
    /// The response fields (for stored bytes, the ones kept with them).
    var headers: HTTPFields = [:]
    var download: Duration
    /// `.network` for a download, `.disk` for stored bytes.
    var source: ImageResponse.Source = .network
    var freshness: ImageResponse.Freshness = .fresh
    /// What to store with the data; `nil` if it must not be stored.
    var metadata: Data?
    var storeClaim = StoreClaim()
}

/// Taken once: whoever takes it stores the data on disk, in the same trip to
/// a blocking thread as its decode (one hand-off instead of two), and only
/// if the data decoded, so that undecodable data never lands on disk.
final class StoreClaim: Sendable {
    private let taken = Atomic<Bool>(false)

    /// `true` for the first caller only.
    func take() -> Bool {
        !taken.exchange(true, ordering: .acquiringAndReleasing)
    }
}

// The stages behind a request: memory (in `ImagePipeline.loadImage`), then
// disk, then the network, then decoding. Disk reads and decodes are jobs on
// the decode threads, downloads run in tasks, and each stage hands its
// result straight to the next: a disk hit costs one thread hand-off, a
// download one task and one hand-off. The shared fetches are coalesced by key.
extension ImagePipeline {
    typealias ImageContext = ImageFetches.Context
    typealias DataContext = DataFetches.Context
    typealias ImageCompletion = @Sendable (Result<FetchedImage, Error>) -> Void

    /// Starts the shared fetch of `request`'s image; `complete` is called
    /// once with its outcome. Returns what stops it.
    func startImageFetch(_ request: ImageRequest, context: ImageContext, complete fetchCompleted: @escaping ImageCompletion) -> @Sendable () -> Void {
        let stage = FetchStage(context: context)
        let complete: ImageCompletion = { outcome in
            stage.finish()
            fetchCompleted(outcome)
        }
        // Another request may have stored the image since the caller looked.
        if let image = cachedImage(for: request) {
            complete(.success(FetchedImage(image: image, source: .memory, timings: .init())))
        } else if let dataCache = diskCacheToRead(for: request) {
            stage.submit(to: decodeThreads) { [self] in
                switch readFromDisk(request, dataCache: dataCache) {
                case .miss: fetchFromNetwork(request, revalidating: nil, stage: stage, context: context, complete: complete)
                case .stale(let entry): fetchFromNetwork(request, revalidating: entry, stage: stage, context: context, complete: complete)
                case .decoded(let decoded, let freshness, let count, let timings):
                    metrics.diskHit()
                    if case .stale(.revalidatingInBackground) = freshness { refreshInBackground(request) }
                    complete(finish(request, decoded, source: .disk, freshness: freshness, dataCount: count, timings: timings))
                }
            }
        } else {
            fetchFromNetwork(request, revalidating: nil, stage: stage, context: context, complete: complete)
        }
        return { stage.cancel() }
    }

    /// The disk cache to look in, if the request reads it and the index may
    /// hold its data (or its processed image): a miss never leaves the caller's thread.
    private func diskCacheToRead(for request: ImageRequest) -> (any DataCaching)? {
        guard request.networkPolicy != .reload, request.cachePolicy.read.contains(.disk),
              let dataCache = configuration.dataCache else { return nil }
        let processedKey = processedStore(for: request)?.key
        guard dataCache.mayContainData(forKey: DiskKey.data(request.cacheKey)) || processedKey.map(dataCache.mayContainData(forKey:)) == true
        else { return nil }
        return dataCache
    }

    /// What a read of the disk tier found.
    private enum DiskTrip: Sendable {
        /// Nothing usable: no entry, or one for other Vary values or with damaged metadata.
        case miss
        /// An entry that needs the server's word before it is used.
        case stale(StoredEntry)
        /// Served from disk (fresh, or stale where that is allowed): decoded, or failed to.
        case decoded(Result<Image, RenderFailure>, ImageResponse.Freshness, Int, ImageResponse.Timings)
    }

    /// Reads and decodes a usable entry (on a decode thread).
    private func readFromDisk(_ request: ImageRequest, dataCache: any DataCaching) -> DiskTrip {
        let readStart = ContinuousClock.now
        let options = decodingOptions(for: request)
        let processedStore = processedStore(for: request)
        let rules = cacheRules
        // A fresh processed image is the result as it is: no scaling, no processors.
        if let processedStore, let processed = dataCache.cachedData(forKey: processedStore.key),
           case .serve(.fresh) = rules.use(processed, for: request) {
            let decodeStart = ContinuousClock.now
            let plain = ImageDecodingOptions(maximumPixelCount: options.maximumPixelCount, maximumFrameCount: options.maximumFrameCount)
            let decoded = Self.decodeAndProcess(processed.data, options: plain, decoders: configuration.decoders, processors: [])
            let timings = ImageResponse.Timings(diskRead: decodeStart - readStart, decode: ContinuousClock.now - decodeStart)
            if case .success = decoded { return .decoded(decoded, .fresh, processed.data.count, timings) }
            Self.remove(processedStore.key, from: dataCache, logger: logger)
        }
        guard let cached = dataCache.cachedData(forKey: DiskKey.data(request.cacheKey)) else { return .miss }
        switch rules.use(cached, for: request) {
        case .skip: return .miss
        case .revalidate(let entry): return .stale(entry)
        case .serve(let freshness):
            let decodeStart = ContinuousClock.now
            let decoded = Self.decodeAndProcess(cached.data, options: options, decoders: configuration.decoders, processors: request.processors)
            Self.releaseFreedMemory(afterDecoding: cached.data.count)
            let timings = ImageResponse.Timings(diskRead: decodeStart - readStart, decode: ContinuousClock.now - decodeStart)
            if case .fresh = freshness { processedStore?.store(decoded, metadata: cached.metadata, logger: logger) }
            return .decoded(decoded, freshness, cached.data.count, timings)
        }
    }

    /// Joins (or starts) the download of the request's data; the data is
    /// decoded, and stored by the first waiter to decode it, on a decode thread.
    private func fetchFromNetwork(
        _ request: ImageRequest,
        revalidating stale: StoredEntry?,
        stage: FetchStage,
        context: ImageContext,
        complete: @escaping ImageCompletion
    ) {
        if request.networkPolicy == .cacheOnly {
            return complete(.failure(.notCached(key: request.cacheKey)))
        }
        let observer = DataFetches.Observer(progress: { context.reportProgress($0) }) { [self] outcome in
            switch outcome {
            case .failure(let error):
                complete(.failure(error))
            case .success(let fetched):
                let decodeStart = ContinuousClock.now
                stage.submit(to: decodeThreads) { [self] in
                    let decoded = decodeAndStore(fetched, for: request)
                    let timings = ImageResponse.Timings(download: fetched.download, decode: ContinuousClock.now - decodeStart)
                    complete(finish(
                        request, decoded, source: fetched.source, freshness: fetched.freshness, dataCount: fetched.data.count, timings: timings
                    ))
                }
            }
        }
        let subscription = stage.joinDownload { priority in
            dataFetches.subscribe(key: request.dataFetchKey, priority: priority, observer: observer) { [self] dataContext in
                await fetchData(request, revalidating: stale, context: dataContext)
            }
        }
        if subscription?.joined == true { metrics.coalesced() }
    }

    /// Decodes fetched data and, if it decodes and this waiter took the
    /// right to, stores it (on a decode thread: one hand-off for both).
    private func decodeAndStore(_ fetched: FetchedData, for request: ImageRequest) -> Result<Image, RenderFailure> {
        let decoded = Self.decodeAndProcess(fetched.data, options: decodingOptions(for: request), decoders: configuration.decoders, processors: request.processors)
        Self.releaseFreedMemory(afterDecoding: fetched.data.count)
        guard let metadata = fetched.metadata, !fetched.freshness.isStale else { return decoded }
        let storesOriginal = configuration.diskStorage.contains(.originalData) || request.imageKey.isOriginal
        // Data that decodes is kept even if a processor failed on it.
        if !decoded.isDecodingFailure, storesOriginal, request.cachePolicy.write.contains(.disk), let dataCache = configuration.dataCache,
           fetched.storeClaim.take() {
            Self.store(fetched.data, metadata: metadata, forKey: DiskKey.data(request.cacheKey), in: dataCache, logger: logger)
        }
        processedStore(for: request)?.store(decoded, metadata: metadata, logger: logger)
        return decoded
    }

    func decodingOptions(for request: ImageRequest) -> ImageDecodingOptions {
        ImageDecodingOptions(
            targetSize: request.targetSize,
            contentMode: request.contentMode,
            maximumPixelCount: configuration.maximumPixelCount,
            maximumFrameCount: configuration.maximumFrameCount
        )
    }

    /// Stores a decoded image in memory (unless it is stale, so that the
    /// next request looks again), or handles a failed decode: data that does
    /// not decode is not kept on disk, as it would fail again. Runs on a decode thread.
    private func finish(
        _ request: ImageRequest,
        _ decoded: Result<Image, RenderFailure>,
        source: ImageResponse.Source,
        freshness: ImageResponse.Freshness,
        dataCount: Int,
        timings: ImageResponse.Timings
    ) -> Result<FetchedImage, Error> {
        let name = request.url?.absoluteString ?? request.cacheKey
        switch decoded {
        case .failure(.decoding(let error)):
            logger.debug("decoding failed", metadata: ["key": "\(request.cacheKey)", "error": "\(error)"])
            if source == .disk, let dataCache = configuration.dataCache { Self.remove(DiskKey.data(request.cacheKey), from: dataCache, logger: logger) }
            return .failure(.decodingFailed(key: name, underlying: error))
        case .failure(.processing(let processor)):
            // The data is fine (another request may process it differently): it stays stored.
            logger.debug("processing failed", metadata: ["key": "\(request.cacheKey)", "processor": "\(processor)"])
            return .failure(.processingFailed(key: name, processor: processor))
        case .success(let image):
            if request.cachePolicy.write.contains(.memory), !freshness.isStale {
                configuration.imageCache?.store(image, forKey: request.imageKey)
            }
            return .success(FetchedImage(image: image, source: source, freshness: freshness, dataCount: dataCount, timings: timings))
        }
    }

    /// Downloads the data (the image fetch has already looked on disk; the
    /// first waiter to decode it stores it). With a stale entry the request
    /// is conditional: a 304 confirms the stored bytes, and a failure to
    /// reach the server lets them stand in where the rules allow.
    func fetchData(_ request: ImageRequest, revalidating stale: StoredEntry?, context: DataContext) async -> Result<FetchedData, Error> {
        let downloadStart = ContinuousClock.now
        let slot = DownloadSlot(context: context, limiter: downloadLimiter)
        let url: URL
        switch request.source {
        case .url(let value):
            url = value
        case .provider(let key, let load):
            let outcome = await withDownloadSlot(host: "", slot: slot) { () async -> Result<Data, Error> in
                do {
                    return .success(try await load())
                } catch {
                    if Task.isCancelled { return .failure(.cancelled(key: key)) }
                    if let error = error as? URLError, error.code == .badURL {
                        return .failure(.invalidRequest(key: key, reason: "not a valid URL"))
                    }
                    return .failure(.dataProviderFailed(key: key, underlying: error))
                }
            } ?? .failure(.cancelled(key: key))
            return outcome.map { data in
                metrics.networkLoad(bytes: data.count)
                return FetchedData(data: data, download: ContinuousClock.now - downloadStart, metadata: Data())
            }
        }
        let rules = cacheRules
        let dataRequest = DataRequest(url: url, headers: request.headers + (stale.map(rules.validators(for:)) ?? [:]))
        let requestTime = rules.now()
        let resumable = stale == nil && request.cachePolicy.write.contains(.disk)
        // A stale copy that may stand in for a failure does so at once, not after the retries.
        let servesStale = stale.map(rules.allowsStaleOnError) ?? false
        let outcome = await download(dataRequest, key: request.cacheKey, resumable: resumable, retries: !servesStale, context: context, slot: slot)
        let download = ContinuousClock.now - downloadStart
        switch outcome {
        case .success(let response) where response.statusCode == 304:
            guard let stale else { return .failure(.httpStatus(code: 304, url: url)) }
            metrics.revalidated()
            let metadata = rules.refreshed(stale, with: response, requestHeaders: request.headers, requestTime: requestTime)
            return .success(FetchedData(
                data: stale.data, headers: HTTPCacheMetadata(decoding: metadata)?.headers ?? response.headers, download: download,
                source: .disk, freshness: .revalidated, metadata: metadata
            ))
        case .success(let response):
            metrics.networkLoad(bytes: response.data.count)
            // Without a disk cache nothing is stored: the metadata is not worth making.
            let metadata = configuration.dataCache == nil
                ? nil : rules.metadata(for: response, requestHeaders: request.headers, requestTime: requestTime)
            return .success(FetchedData(data: response.data, headers: response.headers, download: download, metadata: metadata))
        case .failure(let error):
            guard let stale, error.isTemporary, rules.allowsStaleOnError(stale) else { return .failure(error) }
            logger.info("serving a stale cached copy", metadata: ["key": "\(request.cacheKey)", "error": "\(error)"])
            return .success(FetchedData(
                data: stale.data, headers: stale.metadata?.headers ?? [:], download: download, source: .disk,
                freshness: .stale(.networkFailed(error))
            ))
        }
    }

    /// Stores downloaded data; a failure is logged, not fatal to the load.
    static func store(_ data: Data, metadata: Data, forKey key: String, in dataCache: any DataCaching, logger: Logger) {
        do {
            try dataCache.storeData(data, metadata: metadata, forKey: key)
        } catch {
            logger.warning("storing to the disk cache failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    func removeStoredData(forKey key: String) async {
        guard let dataCache = configuration.dataCache else { return }
        await diskThreads.run { [logger] in Self.remove(key, from: dataCache, logger: logger) }
    }

    static func remove(_ key: String, from dataCache: any DataCaching, logger: Logger) {
        do {
            try dataCache.removeData(forKey: key)
        } catch {
            logger.warning("removing data from the disk cache failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }
}
