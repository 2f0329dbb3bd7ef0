import Foundation
import ImagoConcurrency
import Logging
import Synchronization

/// Loads images: from memory at once if they are there, else from disk, else
/// from the network, decoding off the caller's thread.
///
/// ```swift
/// let pipeline = ImagePipeline(configuration: .init(dataCache: try DiskCache(path: folder)))
/// switch pipeline.loadImage(ImageRequest(url: url, targetSize: ImageSize(width: 256, height: 256))) {
/// case .cached(let response): show(response.image)              // same frame, no flicker
/// case .inProgress(let task): show(try await task.response.image)
/// }
/// ```
///
/// Identical requests (same cache key and decoding options) share one
/// download and one decode; the shared work is cancelled only when every
/// request for it was cancelled.
public final class ImagePipeline: Sendable {
    /// A pipeline with the default configuration: memory cache, no disk cache,
    /// ``HTTPDataLoader/shared``.
    public static let shared = ImagePipeline(configuration: Configuration())

    /// What the pipeline was built from.
    public let configuration: Configuration

    let imageFetches = ImageFetches()
    let dataFetches = DataFetches()
    /// Downloads at once, in all and per host.
    let downloadLimiter: WeightedSemaphore
    /// Disk reads and decodes; as many threads as decodes may run at once.
    /// A service built on the pipeline runs its other CPU work on images
    /// here too (sanitising an SVG it answers as SVG).
    package let decodeThreads: PriorityThreadPool
    /// Partial downloads and explicit cache access; a service built on the
    /// pipeline runs its own blocking file I/O here too.
    package let diskThreads: PriorityThreadPool
    /// Bytes of decoded pixels the renders in flight hold, when the
    /// configuration limits them.
    package let decodeMemory: WeightedSemaphore?
    let metrics: PipelineMetrics
    var logger: Logger { configuration.logger }

    private let nextTaskID = Atomic<UInt64>(1)
    private let activeTasks = Locked<[UInt64: ImageTask]>([:])
    let backgroundRefreshes = Locked<[RefreshKey: Task<Void, Never>]>([:])
    /// Keeps the memory cache subscribed to memory pressure while the pipeline lives.
    private let memoryPressure: MemoryPressureMonitor.Subscription?

    /// Creates a pipeline.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        downloadLimiter = WeightedSemaphore(
            capacity: configuration.maximumConcurrentDownloads,
            perKeyCapacity: configuration.maximumConcurrentDownloadsPerHost
        )
        decodeThreads = PriorityThreadPool(threads: configuration.maximumConcurrentDecodes, name: "imago-decode")
        diskThreads = PriorityThreadPool(threads: configuration.diskThreadCount, name: "imago-disk")
        decodeMemory = configuration.decodeMemoryLimit.map { WeightedSemaphore(capacity: $0) }
        metrics = PipelineMetrics()
        if configuration.trimsMemoryOnPressure, let imageCache = configuration.imageCache {
            let logger = configuration.logger
            memoryPressure = MemoryPressureMonitor.subscribe { trim in
                logger.notice("memory pressure: trimming the memory cache", metadata: ["trim": "\(trim)"])
                Self.trimMemory(imageCache, trim)
            }
        } else {
            memoryPressure = nil
        }
    }

    // MARK: Loading

    /// Loads the image for `request` from memory, disk or the network.
    /// Cancelling the calling task cancels the load.
    public func image(for request: ImageRequest) async throws(ImagePipeline.Error) -> ImageResponse {
        switch loadImage(request) {
        case .cached(let response): return response
        case .inProgress(let task): return try await task.response
        }
    }

    /// Loads the image at `url`.
    public func image(for url: URL) async throws(ImagePipeline.Error) -> ImageResponse {
        try await image(for: ImageRequest(url: url))
    }

    /// The image for `request` if it is in memory; never blocks, never loads.
    /// `nil` for requests that skip memory (``ImageRequest/NetworkPolicy/reload``
    /// and ``ImageRequest/NetworkPolicy/revalidate``).
    public func cachedImage(for request: ImageRequest) -> Image? {
        guard let image = memoryImage(for: request) else { return nil }
        metrics.memoryHit()
        return image
    }

    /// The image in memory for `request` if its policies read memory, not
    /// counted as a hit (the prefetcher's checks are not loads).
    func memoryImage(for request: ImageRequest) -> Image? {
        guard request.cachePolicy.read.contains(.memory), request.networkPolicy.readsMemory else { return nil }
        return configuration.imageCache?.image(forKey: request.imageKey)
    }

    /// A memory hit at once, or a started task: lets a caller show a cached
    /// image in the same frame and a placeholder otherwise.
    public func loadImage(_ request: ImageRequest) -> LoadingImage {
        if let image = cachedImage(for: request) {
            return .cached(ImageResponse(image: image, request: request, source: .memory))
        }
        return .inProgress(startTask(for: request))
    }

    /// Starts loading `request` and returns its task, even if the image is in
    /// memory (the task then completes at once with source `.memory`).
    public func imageTask(for request: ImageRequest) -> ImageTask {
        switch loadImage(request) {
        case .inProgress(let task):
            return task
        case .cached(let response):
            let task = ImageTask(id: nextTaskID.wrappingAdd(1, ordering: .relaxed).oldValue, request: request) { _, _ in }
            task.finish(.success(response))
            return task
        }
    }

    private func startTask(for request: ImageRequest) -> ImageTask {
        let start = ContinuousClock.now
        let task = ImageTask(id: nextTaskID.wrappingAdd(1, ordering: .relaxed).oldValue, request: request) { [weak self] task, outcome in
            guard let self else { return }
            activeTasks.withLock { $0[task.id] = nil }
            metrics.completed(outcome, after: ContinuousClock.now - start)
        }
        activeTasks.withLock { $0[task.id] = task }
        let observer = ImageFetches.Observer(progress: task.reportProgress, completion: { task.complete($0, startedAt: start) })
        let subscription = imageFetches.subscribe(key: request.imageFetchKey, priority: request.priority, observer: observer) {
            [self] context, complete in
            LoadImageStage.start(request, in: self, context: context, complete: complete)
        }
        if subscription.joined { metrics.coalesced() }
        task.attach(subscription)
        return task
    }

    // MARK: Downloads

    /// Stops starting downloads; running ones finish, queued ones wait.
    public func suspendDownloads() {
        downloadLimiter.suspend()
    }

    /// Starts queued downloads again.
    public func resumeDownloads() {
        downloadLimiter.resume()
    }

    /// Whether downloads are suspended.
    public var areDownloadsSuspended: Bool { downloadLimiter.isSuspended }

    /// Cancels every task this pipeline is running.
    public func cancelAll() {
        let tasks = activeTasks.withLock { Array($0.values) }
        for task in tasks { task.cancel() }
    }

    /// The number of tasks running.
    public var activeTaskCount: Int { activeTasks.withLock { $0.count } }
}
