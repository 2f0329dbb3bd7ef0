import Foundation

// Raw data through the same stages as images, less decoding: the disk tier
// under the same HTTP rules, then the shared download (coalesced with image
// requests for the same key), with its retries, limits and revalidation.
extension ImagePipeline {
    /// Loads the bytes for `request` without decoding them: for bodies that
    /// are not images (SVG, Lottie, JSON manifests) or that are passed on as
    /// they are. The disk cache is read and written under the same HTTP
    /// rules as images, and any answer the server lets be stored is stored,
    /// image or not, whatever its status. The answer comes back with its
    /// status and fields (a 404 page is a response, not an error; errors are
    /// failures to get an answer). The request's fields are sent, and its
    /// cache directives and Range are honoured. The request's size, content
    /// mode and processors are ignored; cancelling the calling task cancels
    /// the load.
    ///
    /// ```swift
    /// let manifest = try await pipeline.data(for: ImageRequest(url: manifestURL))
    /// guard manifest.statusCode == 200 else { throw ManifestError.status(manifest.statusCode) }
    /// let decoded = try JSONDecoder().decode(Manifest.self, from: manifest.data)
    /// ```
    public func data(for request: ImageRequest) async throws(ImagePipeline.Error) -> DataResponse {
        var stale: StoredEntry?
        switch await readData(for: request) {
        case .served(let response):
            metrics.diskHit()
            if case .stale(.revalidatingInBackground) = response.freshness { refreshInBackground(request, asData: true) }
            return response
        case .stale(let entry):
            stale = entry
        case .miss:
            break
        }
        guard request.effectiveNetworkPolicy != .cacheOnly else { throw .notCached(key: request.cacheKey) }
        let fetched = try await sharedData(for: request, revalidating: stale).get()
        if let metadata = fetched.metadata, !fetched.freshness.isStale, request.cachePolicy.write.contains(.disk),
            let dataCache = configuration.dataCache, fetched.storeClaim.take(), dataCache.admitsData(forKey: DiskKey.data(request.cacheKey))
        {
            await diskThreads.run(priority: request.priority) { [logger] in
                StoreStage.store(fetched.data, metadata: metadata, forKey: DiskKey.data(request.cacheKey), in: dataCache, logger: logger)
            }
        }
        return DataResponse(
            data: fetched.data, statusCode: fetched.statusCode, headers: fetched.headers, request: request, source: fetched.source,
            freshness: fetched.freshness)
    }

    /// What the disk tier holds for a data request.
    private enum DataRead: Sendable {
        case miss
        case stale(StoredEntry)
        case served(DataResponse)
    }

    /// Reads the stored bytes on the disk threads, if the request reads the
    /// disk and the index may hold them (a miss never leaves the caller). A
    /// request with a Range gets its part of a stored full answer; a stale
    /// one is not revalidated for it, the Range goes to the server.
    private func readData(for request: ImageRequest) async -> DataRead {
        let key = DiskKey.data(request.cacheKey)
        guard request.networkPolicy != .reload, request.cachePolicy.read.contains(.disk),
            let dataCache = configuration.dataCache, dataCache.mayContainData(forKey: key)
        else { return .miss }
        let rules = cacheRules
        return await diskThreads.run(priority: request.priority) {
            guard let cached = dataCache.cachedData(forKey: key) else { return .miss }
            let range = request.headers.first(.range)
            switch rules.use(cached, for: request) {
            case .skip: return .miss
            case .revalidate(let entry): return range == nil ? .stale(entry) : .miss
            case .serve(let freshness, let entry):
                let response = DataResponse(
                    data: entry.data, statusCode: entry.statusCode, headers: entry.servedFields, request: request, source: .disk,
                    freshness: freshness)
                guard let range else { return .served(response) }
                return .served(response.part(range, ifRange: request.headers.first(.ifRange)))
            }
        }
    }

    /// Joins (or starts) the shared download of the request's data and waits
    /// for it; leaving it when the calling task is cancelled.
    private func sharedData(for request: ImageRequest, revalidating stale: StoredEntry?) async -> Result<FetchedData, Error> {
        await dataFetches.value(
            for: request.dataFetchKey, priority: request.priority, subscribed: { if $0 { metrics.coalesced() } },
            operation: { [self] context in await FetchDataStage(request, pipeline: self, revalidating: stale, context: context).run() }
        )
    }
}
