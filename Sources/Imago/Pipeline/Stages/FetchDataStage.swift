import Foundation
import ImagoConcurrency
import Synchronization

/// The downloads shared by identical requests, images and `data(for:)`
/// alike: one per data key (a reload has its own).
typealias DataFetches = CoalescingPool<DataFetchKey, FetchedData, ImagePipeline.Error, DownloadProgress>

/// What a shared data fetch produces: the bytes (downloaded, or the disk
/// entry a 304 confirmed or a failure let stand in), how long they took, and
/// the right to store them, which the first waiter to decode them takes.
struct FetchedData: Sendable {
    var data: Data
    /// The response's status (for stored bytes, the stored one).
    var statusCode = 200
    /// The response fields (for stored bytes, the ones kept with them and their Age).
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

/// One shared data fetch: the request's data provider, or a download of
/// its URL (conditional when a stale entry is given) with its retries and
/// resumption, the outcome judged by the HTTP caching rules. The caller has
/// already looked on disk; the first waiter to decode the data stores it.
/// Runs in the pool's task for the data key; images and `data(for:)` share it.
struct FetchDataStage {
    private let pipeline: ImagePipeline
    private let request: ImageRequest
    private let stale: StoredEntry?
    private let context: DataFetches.Context

    init(_ request: ImageRequest, pipeline: ImagePipeline, revalidating stale: StoredEntry?, context: DataFetches.Context) {
        self.pipeline = pipeline
        self.request = request
        self.stale = stale
        self.context = context
    }

    func run() async -> Result<FetchedData, ImagePipeline.Error> {
        let start = ContinuousClock.now
        let slot = DownloadSlot(context: context, limiter: pipeline.downloadLimiter)
        let url: URL
        switch request.source {
        case .url(let value): url = value
        case .provider(let key, let load): return await provide(key: key, load: load, slot: slot, since: start)
        }
        // 1. The request: the caller's fields, and the stale entry's validators.
        let rules = pipeline.cacheRules
        let dataRequest = DataRequest(
            url: url, headers: request.headers + (stale.map(rules.validators(for:)) ?? [:]), scopedHeaders: request.scopedHeaders)
        let requestTime = rules.now()
        // 2. The download, its attempts and resumption (a stale copy that may
        //    stand in for a failure does so at once, not after the retries).
        //    A Range of the caller's own is passed on, never resumed.
        let attempts = DownloadLoop(
            pipeline: pipeline, key: request.cacheKey, context: context, slot: slot,
            resumable: stale == nil && request.cachePolicy.write.contains(.disk) && !request.headers.contains(.range),
            retries: !(stale.map(rules.allowsStaleOnError) ?? false)
        )
        let outcome = await attempts.run(dataRequest)
        let download = ContinuousClock.now - start
        // 3. The outcome, under the HTTP caching rules.
        switch outcome {
        case .success(let response):
            if response.statusCode == 304, let stale {
                return .success(confirmed(stale, by: response, requestTime: requestTime, download: download))
            }
            if DataLoadingError.temporaryStatuses.contains(response.statusCode), let stale, rules.allowsStaleOnError(stale) {
                return .success(servingStale(stale, after: .httpStatus(code: response.statusCode, url: url), download: download))
            }
            pipeline.metrics.networkLoad(bytes: response.data.count)
            // Without a disk cache nothing is stored: the metadata is not worth making.
            let metadata =
                pipeline.configuration.dataCache == nil
                ? nil : rules.metadata(for: response, requestHeaders: request.headers, requestTime: requestTime)
            return .success(
                FetchedData(data: response.data, statusCode: response.statusCode, headers: response.headers, download: download, metadata: metadata)
            )
        case .failure(let error):
            guard let stale, error.isTemporary, rules.allowsStaleOnError(stale) else { return .failure(error) }
            return .success(servingStale(stale, after: error, download: download))
        }
    }

    /// The stored entry, confirmed by a 304: its fields updated, its age restarted.
    private func confirmed(_ stale: StoredEntry, by response: DataLoadingResponse, requestTime: Date, download: Duration) -> FetchedData {
        pipeline.metrics.revalidated()
        let rules = pipeline.cacheRules
        let metadata = rules.refreshed(stale, with: response, requestHeaders: request.headers, requestTime: requestTime)
        let entry = StoredEntry(
            data: stale.data, metadata: metadata,
            freshness: metadata.freshness(at: rules.now(), maximumHeuristicLifetime: rules.maximumHeuristicLifetime))
        return FetchedData(
            data: stale.data, statusCode: metadata.statusCode, headers: entry.servedFields, download: download, source: .disk,
            freshness: .revalidated, metadata: metadata.encoded())
    }

    /// The stale entry, standing in for the answer the server failed to give.
    private func servingStale(_ entry: StoredEntry, after error: ImagePipeline.Error, download: Duration) -> FetchedData {
        pipeline.logger.info("serving a stale cached copy", metadata: ["key": "\(request.cacheKey)", "error": "\(error)"])
        return FetchedData(
            data: entry.data, statusCode: entry.statusCode, headers: entry.servedFields, download: download, source: .disk,
            freshness: .stale(.networkFailed(error)))
    }

    /// The data from the request's provider, within a download slot.
    private func provide(
        key: String, load: @Sendable () async throws -> Data, slot: DownloadSlot, since start: ContinuousClock.Instant
    ) async -> Result<FetchedData, ImagePipeline.Error> {
        let outcome =
            await slot.withTurn(host: "") { () async -> Result<Data, ImagePipeline.Error> in
                do {
                    return .success(try await load())
                } catch {
                    if Task.isCancelled { return .failure(.cancelled(key: key)) }
                    if let error = error as? URLError, error.code == .badURL { return .failure(.invalidRequest(key: key, reason: "not a valid URL")) }
                    return .failure(.dataProviderFailed(key: key, underlying: error))
                }
            } ?? .failure(.cancelled(key: key))
        return outcome.map { data in
            pipeline.metrics.networkLoad(bytes: data.count)
            return FetchedData(data: data, download: ContinuousClock.now - start, metadata: Data())
        }
    }
}
