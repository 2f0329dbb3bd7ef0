import Foundation

/// What a shared data fetch produces: encoded bytes and where they came from.
struct FetchedData: Sendable {
    var data: Data
    var source: ImageResponse.Source
    var diskRead: Duration?
    var download: Duration?
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
        let ticket = decodeLimiter.enqueue(priority: context.priority)
        context.observePriority { [decodeLimiter] in decodeLimiter.setPriority($0, for: ticket) }
        guard await decodeLimiter.wait(ticket) else { return .failure(.cancelled(key: request.cacheKey)) }
        defer { decodeLimiter.release(ticket) }
        let options = ImageDecodingOptions(targetSize: request.targetSize, maximumPixelCount: configuration.maximumPixelCount)
        let decoded = await decodeThreads.run { [configuration] in
            Result { () throws(ImageDecodingError) in try Self.decode(fetched.data, options: options, decoders: configuration.decoders) }
        }
        switch decoded {
        case .failure(let error):
            logger.debug("decoding failed", metadata: ["key": "\(request.cacheKey)", "error": "\(error)"])
            // Data that does not decode is not kept: it would fail again.
            if request.cachePolicy.write.contains(.disk) || fetched.source == .disk {
                await removeStoredData(forKey: request.cacheKey)
            }
            return .failure(.decodingFailed(key: request.url?.absoluteString ?? request.cacheKey, underlying: error))
        case .success(let image):
            if request.cachePolicy.write.contains(.memory) {
                configuration.imageCache?.store(image, forKey: request.imageKey)
            }
            let timings = ImageResponse.Timings(
                diskRead: fetched.diskRead, download: fetched.download, decode: ContinuousClock.now - decodeStart
            )
            return .success(FetchedImage(image: image, source: fetched.source, dataCount: fetched.data.count, timings: timings))
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

    func fetchData(_ request: ImageRequest, context: DataContext) async -> Result<FetchedData, Error> {
        let key = request.cacheKey
        var diskRead: Duration?
        if request.cachePolicy.read.contains(.disk), let dataCache = configuration.dataCache {
            let start = ContinuousClock.now
            let cached = await diskThreads.run { dataCache.cachedData(forKey: key) }
            diskRead = ContinuousClock.now - start
            if let cached {
                metrics.diskHit()
                return .success(FetchedData(data: cached.data, source: .disk, diskRead: diskRead))
            }
        }
        let downloadStart = ContinuousClock.now
        let data: Data
        switch await download(request, context: context) {
        case .success(let value): data = value
        case .failure(let error): return .failure(error)
        }
        metrics.networkLoad(bytes: data.count)
        if request.cachePolicy.write.contains(.disk), let dataCache = configuration.dataCache {
            await diskThreads.run { [logger] in
                do {
                    try dataCache.storeData(data, metadata: Data(), forKey: key)
                } catch {
                    logger.warning("storing to the disk cache failed", metadata: ["key": "\(key)", "error": "\(error)"])
                }
            }
        }
        return .success(FetchedData(data: data, source: .network, diskRead: diskRead, download: ContinuousClock.now - downloadStart))
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
