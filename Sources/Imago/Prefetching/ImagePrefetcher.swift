import ImagoConcurrency

/// Loads images ahead of need, at low priority, so that they are in the
/// caches by the time they are shown (a collection view's prefetching, the
/// next page of a feed).
///
/// ```swift
/// let prefetcher = ImagePrefetcher(pipeline: pipeline)
/// prefetcher.startPrefetching(with: upcoming.map { ImageRequest(url: $0) })
/// // scrolled the other way:
/// prefetcher.stopPrefetching(with: passed.map { ImageRequest(url: $0) })
/// ```
///
/// A prefetch shares its work with any real request for the same image: the
/// real request lifts the shared work to its own priority, and stopping the
/// prefetch leaves the real request running.
public final class ImagePrefetcher: Sendable {
    /// The pipeline that loads the images.
    public let pipeline: ImagePipeline
    /// The priority prefetches run at.
    public let priority: ImageRequest.Priority

    private let tasks = Locked<[ImageCacheKey: ImageTask]>([:])

    /// Creates a prefetcher. The default priority, `.veryLow`, keeps
    /// prefetches behind every request for something on screen.
    public init(pipeline: ImagePipeline = .shared, priority: ImageRequest.Priority = .veryLow) {
        self.pipeline = pipeline
        self.priority = priority
    }

    /// Starts loading each request that is neither in memory nor already being prefetched.
    public func startPrefetching(with requests: [ImageRequest]) {
        for var request in requests {
            let key = request.imageKey
            guard pipeline.memoryImage(for: request) == nil, tasks.withLock({ $0[key] == nil }) else { continue }
            request.priority = priority
            let task = pipeline.imageTask(for: request)
            let added = tasks.withLock { tasks in
                guard tasks[key] == nil else { return false }
                tasks[key] = task
                return true
            }
            guard added else {
                task.cancel()
                continue
            }
            Task.detached { [weak self] in
                _ = await task.result
                self?.tasks.withLock { tasks in
                    if tasks[key] === task { tasks[key] = nil }
                }
            }
        }
    }

    /// Cancels the prefetches of these requests (work shared with real requests goes on).
    public func stopPrefetching(with requests: [ImageRequest]) {
        let stopped = tasks.withLock { tasks in requests.compactMap { tasks.removeValue(forKey: $0.imageKey) } }
        for task in stopped { task.cancel() }
    }

    /// Cancels every prefetch.
    public func stopAll() {
        let stopped = tasks.withLock { tasks in
            defer { tasks = [:] }
            return Array(tasks.values)
        }
        for task in stopped { task.cancel() }
    }

    /// The number of prefetches in flight.
    public var pendingCount: Int { tasks.withLock { $0.count } }

    deinit {
        stopAll()
    }
}
