import CoreMetrics
import Synchronization

/// The pipeline's counters: kept in atomics for ``ImagePipeline/statistics``
/// and reported through swift-metrics (labels `imago_*`) to whatever backend
/// the application bootstrapped.
final class PipelineMetrics: Sendable {
    private let memoryHits = Atomic<Int>(0)
    private let diskHits = Atomic<Int>(0)
    private let networkLoads = Atomic<Int>(0)
    private let bytesDownloaded = Atomic<Int>(0)
    private let revalidations = Atomic<Int>(0)
    private let retries = Atomic<Int>(0)
    private let coalescedRequests = Atomic<Int>(0)
    private let completions = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)
    private let cancellations = Atomic<Int>(0)

    private let memoryHitCounter = Counter(label: "imago_memory_hits_total")
    private let diskHitCounter = Counter(label: "imago_disk_hits_total")
    private let networkLoadCounter = Counter(label: "imago_network_loads_total")
    private let bytesCounter = Counter(label: "imago_downloaded_bytes_total")
    private let revalidationCounter = Counter(label: "imago_not_modified_total")
    private let retryCounter = Counter(label: "imago_retries_total")
    private let coalescedCounter = Counter(label: "imago_coalesced_requests_total")
    private let errorCounter = Counter(label: "imago_errors_total")
    private let loadTimer = Timer(label: "imago_load_duration")

    func memoryHit() {
        memoryHits.add(1, ordering: .relaxed)
        memoryHitCounter.increment()
    }

    func diskHit() {
        diskHits.add(1, ordering: .relaxed)
        diskHitCounter.increment()
    }

    func networkLoad(bytes: Int) {
        networkLoads.add(1, ordering: .relaxed)
        bytesDownloaded.add(bytes, ordering: .relaxed)
        networkLoadCounter.increment()
        bytesCounter.increment(by: bytes)
    }

    func revalidated() {
        revalidations.add(1, ordering: .relaxed)
        revalidationCounter.increment()
    }

    func retried() {
        retries.add(1, ordering: .relaxed)
        retryCounter.increment()
    }

    func coalesced() {
        coalescedRequests.add(1, ordering: .relaxed)
        coalescedCounter.increment()
    }

    func completed(_ result: Result<ImageResponse, ImagePipeline.Error>, after duration: Duration) {
        completions.add(1, ordering: .relaxed)
        switch result {
        case .success:
            loadTimer.recordNanoseconds(duration.nanoseconds)
        case .failure(let error) where error.isCancellation:
            cancellations.add(1, ordering: .relaxed)
        case .failure:
            failures.add(1, ordering: .relaxed)
            errorCounter.increment()
        }
    }

    var snapshot: ImagePipeline.Statistics {
        ImagePipeline.Statistics(
            memoryHits: memoryHits.load(ordering: .relaxed),
            diskHits: diskHits.load(ordering: .relaxed),
            networkLoads: networkLoads.load(ordering: .relaxed),
            bytesDownloaded: bytesDownloaded.load(ordering: .relaxed),
            revalidations: revalidations.load(ordering: .relaxed),
            retries: retries.load(ordering: .relaxed),
            coalescedRequests: coalescedRequests.load(ordering: .relaxed),
            completedTasks: completions.load(ordering: .relaxed),
            failedTasks: failures.load(ordering: .relaxed),
            cancelledTasks: cancellations.load(ordering: .relaxed)
        )
    }
}

extension ImagePipeline {
    /// A snapshot of a pipeline's counters since it was created.
    public struct Statistics: Sendable, Equatable {
        /// Images returned from memory, ``ImagePipeline/cachedImage(for:)`` hits
        /// included (the prefetcher's checks are not counted).
        public var memoryHits: Int
        /// Data read from the disk cache.
        public var diskHits: Int
        /// Downloads (or data-provider calls) that completed.
        public var networkLoads: Int
        /// Bytes those downloads brought.
        public var bytesDownloaded: Int
        /// Stale disk entries the server confirmed with 304 Not Modified.
        public var revalidations: Int
        /// Downloads tried again after a temporary failure.
        public var retries: Int
        /// Requests and fetches that joined work already running instead of starting their own.
        public var coalescedRequests: Int
        /// Tasks that completed in any way.
        public var completedTasks: Int
        /// Tasks that failed.
        public var failedTasks: Int
        /// Tasks that were cancelled.
        public var cancelledTasks: Int
        /// Images the memory cache evicted to stay within its limits.
        public var memoryEvictions = 0
    }

    /// The pipeline's counters now. `memoryEvictions` is read from the
    /// memory cache, which counts them itself (so they are in the snapshot,
    /// not in the swift-metrics counters).
    public var statistics: Statistics {
        var statistics = metrics.snapshot
        statistics.memoryEvictions = configuration.imageCache?.evictionCount ?? 0
        return statistics
    }
}
