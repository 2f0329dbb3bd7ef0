import Foundation
import ImagoConcurrency

/// The image fetches shared by identical requests: one per image and network policy.
typealias ImageFetches = CoalescingPool<ImageFetchKey, FetchedImage, ImagePipeline.Error, DownloadProgress>

/// One shared image fetch, from start to finish: memory, then disk, then
/// the network, then decoding.
///
/// ```
/// LoadImageStage ─► memory? ─► ReadDiskStage (decode thread) ─► FetchDataStage (shared download)
///                                        │                              ▼
///                                        └──► DecodeStage ─► ProcessStage ─► StoreStage (decode thread) ─► done
/// ```
///
/// Each step hands its result straight to the next (a disk hit costs one
/// thread hand-off, a download one task and one hand-off); the fetch's
/// ``FetchStage`` records which step is live, so that cancel and priority
/// reach that step only.
final class LoadImageStage: Sendable {
    private let pipeline: ImagePipeline
    private let request: ImageRequest
    private let context: ImageFetches.Context
    private let stage: FetchStage
    private let complete: @Sendable (Result<FetchedImage, ImagePipeline.Error>) -> Void

    /// Starts the fetch of `request`'s image for the pool's `context`;
    /// `complete` hears its outcome once. Returns what stops it.
    static func start(
        _ request: ImageRequest, in pipeline: ImagePipeline, context: ImageFetches.Context,
        complete: @escaping @Sendable (Result<FetchedImage, ImagePipeline.Error>) -> Void
    ) -> @Sendable () -> Void {
        let load = LoadImageStage(request, pipeline: pipeline, context: context, complete: complete)
        load.start()
        return { load.stage.cancel() }
    }

    private init(
        _ request: ImageRequest, pipeline: ImagePipeline, context: ImageFetches.Context,
        complete: @escaping @Sendable (Result<FetchedImage, ImagePipeline.Error>) -> Void
    ) {
        self.pipeline = pipeline
        self.request = request
        self.context = context
        self.complete = complete
        stage = FetchStage(context: context)
    }

    private func start() {
        // 1. Memory: another request may have stored the image since the caller looked.
        if let image = pipeline.cachedImage(for: request) {
            return finish(.success(FetchedImage(image: image, source: .memory, timings: .init())))
        }
        // 2. Disk, on a decode thread, where the index may hold the data: a miss never leaves this thread.
        if let disk = ReadDiskStage(request, pipeline: pipeline) {
            return stage.submit(to: pipeline.decodeThreads) { [self] in readDisk(disk) }
        }
        // 3. The network.
        fetchData(revalidating: nil)
    }

    /// On a decode thread: an entry the HTTP rules let serve is decoded and
    /// done; a stale one is revalidated; nothing usable goes to the network.
    private func readDisk(_ disk: ReadDiskStage) {
        switch disk.run() {
        case .miss:
            fetchData(revalidating: nil)
        case .stale(let entry):
            fetchData(revalidating: entry)
        case .failed(let error):
            pipeline.metrics.diskHit()
            finish(.failure(error))
        case .decoded(let decoded, let freshness, let count, let timings):
            pipeline.metrics.diskHit()
            if case .stale(.revalidatingInBackground) = freshness { pipeline.refreshInBackground(request) }
            let stored = StoreStage(request, pipeline: pipeline)
            finish(stored.result(decoded, source: .disk, freshness: freshness, dataCount: count, timings: timings))
        }
    }

    /// Joins (or starts) the shared download of the request's data
    /// (conditional when `stale` is given); its outcome is decoded next.
    private func fetchData(revalidating stale: StoredEntry?) {
        if request.effectiveNetworkPolicy == .cacheOnly { return finish(.failure(.notCached(key: request.cacheKey))) }
        let subscription = stage.joinDownload { priority in
            pipeline.dataFetches.subscribe(
                key: request.dataFetchKey, priority: priority,
                observer: .init(progress: context.reportProgress, completion: { [self] in decode($0) })
            ) { [pipeline, request] dataContext in
                await FetchDataStage(request, pipeline: pipeline, revalidating: stale, context: dataContext).run()
            }
        }
        if subscription?.joined == true { pipeline.metrics.coalesced() }
    }

    /// The downloaded (or confirmed) data: decoded, processed and stored in
    /// one job on a decode thread, the first waiter storing the data.
    private func decode(_ outcome: Result<FetchedData, ImagePipeline.Error>) {
        let fetched: FetchedData
        switch outcome {
        case .failure(let error): return finish(.failure(error))
        case .success(let value): fetched = value
        }
        if let error = request.imageStatusError(fetched.statusCode) { return finish(.failure(error)) }
        let decodeStart = ContinuousClock.now
        stage.submit(to: pipeline.decodeThreads) { [self] in
            let decoded = DecodeStage(request, pipeline: pipeline).run(fetched.data).flatMap(ProcessStage(request.processors).run)
            let store = StoreStage(request, pipeline: pipeline)
            store.storeOnDisk(fetched, decoded: decoded)
            let timings = ImageResponse.Timings(download: fetched.download, decode: ContinuousClock.now - decodeStart)
            finish(store.result(decoded, source: fetched.source, freshness: fetched.freshness, dataCount: fetched.data.count, timings: timings))
        }
    }

    private func finish(_ outcome: Result<FetchedImage, ImagePipeline.Error>) {
        stage.finish()
        complete(outcome)
    }
}

extension ImageRequest {
    /// What an answer with `statusCode` is to an image request: nothing for
    /// a 2xx with a whole body, which is decoded; else that status as an
    /// error (204 and 205 have no body, a 206 is a part).
    func imageStatusError(_ statusCode: Int) -> ImagePipeline.Error? {
        guard !(200...299).contains(statusCode) || [204, 205, 206].contains(statusCode) else { return nil }
        return .httpStatus(code: statusCode, url: url ?? URL(fileURLWithPath: cacheKey))
    }
}
