import Foundation
import Logging
import Synchronization

/// What a shared data fetch produces: downloaded bytes, how long they took,
/// and the right to store them, which the first waiter to decode them takes.
struct FetchedData: Sendable {
    var data: Data
    var download: Duration
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
// disk, then the network, then decoding. Each runs on the thread pool that
// suits it; the shared fetches are coalesced by key.
extension ImagePipeline {
    typealias ImageContext = CoalescingPool<FetchedImage>.Context
    typealias DataContext = CoalescingPool<FetchedData>.Context

    func fetchImage(_ request: ImageRequest, context: ImageContext) async -> Result<FetchedImage, Error> {
        // Another request may have stored the image since the caller looked.
        if let image = cachedImage(for: request) {
            return .success(FetchedImage(image: image, source: .memory, timings: .init()))
        }
        if let hit = await readAndDecodeFromDisk(request, context: context) {
            return hit
        }
        let dataOutcome = await dataFetches.value(
            key: request.cacheKey,
            priority: context.priority,
            progress: { context.reportProgress($0) },
            onSubscribe: { subscription in
                if subscription.joined { metrics.coalesced() }
                context.observePriority { subscription.setPriority($0) }
            },
            operation: { [self] dataContext in await fetchData(request, context: dataContext) }
        )
        let fetched: FetchedData
        switch dataOutcome {
        case .success(let value): fetched = value
        case .failure(let error): return .failure(error)
        }
        let decodeStart = ContinuousClock.now
        guard let ticket = await decodeSlot(context) else { return .failure(.cancelled(key: request.cacheKey)) }
        defer { decodeLimiter.release(ticket) }
        let options = decodingOptions(for: request)
        let dataCache = request.cachePolicy.write.contains(.disk) ? configuration.dataCache : nil
        let decoded = await decodeThreads.run { [configuration, logger] in
            let decoded = Result { () throws(ImageDecodingError) in
                try Self.decode(fetched.data, options: options, decoders: configuration.decoders)
            }
            if case .success = decoded, let dataCache, fetched.storeClaim.take() {
                Self.store(fetched.data, forKey: request.cacheKey, in: dataCache, logger: logger)
            }
            return decoded
        }
        let timings = ImageResponse.Timings(download: fetched.download, decode: ContinuousClock.now - decodeStart)
        return await finish(request, decoded, source: .network, dataCount: fetched.data.count, timings: timings)
    }

    /// A disk hit, read and decoded in one trip to the decode threads; `nil`
    /// on a miss. The index answers a miss without leaving this thread.
    private func readAndDecodeFromDisk(_ request: ImageRequest, context: ImageContext) async -> Result<FetchedImage, Error>? {
        let key = request.cacheKey
        guard request.cachePolicy.read.contains(.disk), let dataCache = configuration.dataCache,
              dataCache.mayContainData(forKey: key) else { return nil }
        guard let ticket = await decodeSlot(context) else { return .failure(.cancelled(key: key)) }
        defer { decodeLimiter.release(ticket) }
        let options = decodingOptions(for: request)
        let outcome = await decodeThreads.run { [configuration] () -> (Result<Image, ImageDecodingError>, Int, Duration, Duration)? in
            let readStart = ContinuousClock.now
            guard let cached = dataCache.cachedData(forKey: key) else { return nil }
            let decodeStart = ContinuousClock.now
            let decoded = Result { () throws(ImageDecodingError) in
                try Self.decode(cached.data, options: options, decoders: configuration.decoders)
            }
            return (decoded, cached.data.count, decodeStart - readStart, ContinuousClock.now - decodeStart)
        }
        guard let (decoded, count, diskRead, decode) = outcome else { return nil }
        metrics.diskHit()
        return await finish(request, decoded, source: .disk, dataCount: count, timings: .init(diskRead: diskRead, decode: decode))
    }

    /// Waits for a decoding slot at the work's priority; `nil` if cancelled while queued.
    private func decodeSlot(_ context: ImageContext) async -> WorkLimiter.Ticket? {
        let ticket = decodeLimiter.enqueue(priority: context.priority)
        context.observePriority { [decodeLimiter] in decodeLimiter.setPriority($0, for: ticket) }
        return await decodeLimiter.wait(ticket) ? ticket : nil
    }

    private func decodingOptions(for request: ImageRequest) -> ImageDecodingOptions {
        ImageDecodingOptions(targetSize: request.targetSize, maximumPixelCount: configuration.maximumPixelCount)
    }

    /// Stores a decoded image in memory, or handles a failed decode: data
    /// that does not decode is not kept on disk, as it would fail again.
    private func finish(
        _ request: ImageRequest,
        _ decoded: Result<Image, ImageDecodingError>,
        source: ImageResponse.Source,
        dataCount: Int,
        timings: ImageResponse.Timings
    ) async -> Result<FetchedImage, Error> {
        switch decoded {
        case .failure(let error):
            logger.debug("decoding failed", metadata: ["key": "\(request.cacheKey)", "error": "\(error)"])
            if source == .disk { await removeStoredData(forKey: request.cacheKey) }
            return .failure(.decodingFailed(key: request.url?.absoluteString ?? request.cacheKey, underlying: error))
        case .success(let image):
            if request.cachePolicy.write.contains(.memory) {
                configuration.imageCache?.store(image, forKey: request.imageKey)
            }
            return .success(FetchedImage(image: image, source: source, dataCount: dataCount, timings: timings))
        }
    }

    static func decode(_ data: Data, options: ImageDecodingOptions, decoders: [any ImageDecoding]) throws(ImageDecodingError) -> Image {
        let format = ImageFormat(sniffing: data)
        guard let decoder = decoders.first(where: { $0.canDecode(format) }) else {
            let seen = format == .unknown ? ImageFormat.describeUnrecognised(data) : "\(format), which no decoder handles"
            throw ImageDecodingError(code: .unsupportedFormat(seen: seen), format: format)
        }
        return try decoder.decode(data, options: options)
    }

    /// Downloads the data (the image fetch has already looked on disk; the
    /// first waiter to decode it stores it).
    func fetchData(_ request: ImageRequest, context: DataContext) async -> Result<FetchedData, Error> {
        let downloadStart = ContinuousClock.now
        let data: Data
        switch await download(request, context: context) {
        case .success(let value): data = value
        case .failure(let error): return .failure(error)
        }
        metrics.networkLoad(bytes: data.count)
        return .success(FetchedData(data: data, download: ContinuousClock.now - downloadStart))
    }

    /// Stores downloaded data; a failure is logged, not fatal to the load.
    static func store(_ data: Data, forKey key: String, in dataCache: any DataCaching, logger: Logger) {
        do {
            try dataCache.storeData(data, metadata: Data(), forKey: key)
        } catch {
            logger.warning("storing to the disk cache failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    private func download(_ request: ImageRequest, context: DataContext) async -> Result<Data, Error> {
        let key = request.cacheKey
        let host: String
        switch request.source {
        case .url(let url): host = url.host ?? ""
        case .provider: host = ""
        }
        let ticket = downloadLimiter.enqueue(key: host, priority: context.priority)
        context.observePriority { [downloadLimiter] in downloadLimiter.setPriority($0, for: ticket) }
        guard await downloadLimiter.wait(ticket) else { return .failure(.cancelled(key: key)) }
        defer { downloadLimiter.release(ticket) }
        switch request.source {
        case .url(let url):
            do {
                let response = try await configuration.dataLoader.loadData(
                    for: DataRequest(url: url, headers: request.headers),
                    progress: { context.reportProgress($0) }
                )
                return .success(response.data)
            } catch {
                return .failure(Error(error, key: key))
            }
        case .provider(_, let load):
            do {
                return .success(try await load())
            } catch {
                if Task.isCancelled { return .failure(.cancelled(key: key)) }
                if let error = error as? URLError, error.code == .badURL {
                    return .failure(.invalidRequest(key: key, reason: "not a valid URL"))
                }
                return .failure(.dataProviderFailed(key: key, underlying: error))
            }
        }
    }

    func removeStoredData(forKey key: String) async {
        guard let dataCache = configuration.dataCache else { return }
        await diskThreads.run { [logger] in
            do {
                try dataCache.removeData(forKey: key)
            } catch {
                logger.warning("removing data from the disk cache failed", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }
}
