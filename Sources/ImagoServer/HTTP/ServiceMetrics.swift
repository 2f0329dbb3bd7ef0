import Foundation
import ImagoConcurrency
import Prometheus

/// The service's own metrics in a Prometheus registry, which `/metrics`
/// prints: requests by status, their duration, the requests in flight, the
/// transformation queue, result-cache hits and transformations. `imago serve` also bootstraps
/// swift-metrics with the same registry, so the pipeline's counters
/// (`imago_memory_hits_total`, downloads, errors) come out beside them.
public final class ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let duration: DurationHistogram
    private let inFlight: Gauge
    private let queueLength: Gauge
    private let resultHits: Counter
    private let transformations: Counter
    private let storeHits: Counter
    private let storeErrors: Counter
    /// The counters of answers by status, each made on its status's first
    /// answer: the registry looks a series up by name and labels, which
    /// is too slow to do for every answer.
    private let requestsByStatus = Locked<[Int: Counter]>([:])

    /// The counter of answers with `status` (one series per status).
    private func requests(_ status: Int) -> Counter {
        if let counter = requestsByStatus.withLock({ $0[status] }) { return counter }
        let counter = registry.makeCounter(
            descriptor: .init(
                namespace: "imago", subsystem: "http", metricName: "requests", unitName: "total", helpText: "Requests answered, by status"),
            labels: [("status", String(status))]
        )
        requestsByStatus.withLock { $0[status] = counter }
        return counter
    }

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        duration = registry.makeDurationHistogram(
            descriptor: .init(
                namespace: "imago", subsystem: "http", metricName: "request_duration", unitName: "seconds",
                helpText: "Time from a request's arrival to its response"),
            buckets: [
                .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
            ]
        )
        inFlight = registry.makeGauge(
            descriptor: .init(
                namespace: "imago", subsystem: "http", metricName: "requests_in", unitName: "flight", helpText: "Requests being answered"
            ))
        queueLength = registry.makeGauge(
            descriptor: .init(
                namespace: "imago", subsystem: "transformation", metricName: "queue", unitName: "length",
                helpText: "Requests waiting for a transformation slot"
            ))
        resultHits = registry.makeCounter(
            descriptor: .init(
                namespace: "imago", subsystem: "result_cache", metricName: "hits", unitName: "total",
                helpText: "Answers served from the encoded-result cache"
            ))
        transformations = registry.makeCounter(
            descriptor: .init(
                namespace: "imago", metricName: "transformations", unitName: "total",
                helpText: "Answers made by decoding, processing and encoding a source"
            ))
        storeHits = registry.makeCounter(
            descriptor: .init(
                namespace: "imago", subsystem: "result_store", metricName: "hits", unitName: "total",
                helpText: "Answers taken from the shared result store instead of being made"
            ))
        storeErrors = registry.makeCounter(
            descriptor: .init(
                namespace: "imago", subsystem: "result_store", metricName: "errors", unitName: "total",
                helpText: "Reads and writes of the shared result store that failed (the store is then skipped for a while)"
            ))
    }

    /// Counts an answer served from the result cache.
    func resultCacheHit() { resultHits.increment() }

    /// Counts an answer made from its source.
    func transformed() { transformations.increment() }

    /// Counts an answer taken from the shared result store.
    func resultStoreHit() { storeHits.increment() }

    /// Counts a failed read or write of the shared result store.
    func resultStoreError() { storeErrors.increment() }

    /// Counts a request in flight until the returned closure is called with its status.
    func begin() -> @Sendable (Int) -> Void {
        let start = ContinuousClock.now
        inFlight.increment()
        return { [self] status in
            inFlight.decrement()
            duration.record(start.duration(to: .now))
            requests(status).increment()
        }
    }

    /// The Prometheus text exposition of everything in the registry, with
    /// the transformation queue's length as it is now.
    func exposition(queueLength length: Int) -> String {
        queueLength.set(to: Double(length))
        return registry.emitToString()
    }
}
