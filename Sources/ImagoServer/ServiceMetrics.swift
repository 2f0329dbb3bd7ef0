import Foundation
import Prometheus

/// The service's own metrics in a Prometheus registry, which `/metrics`
/// prints: requests by status, their duration, the requests in flight.
/// `imago serve` also bootstraps swift-metrics with the same registry, so
/// the pipeline's counters (`imago_memory_hits_total`, downloads, errors)
/// come out beside them.
public final class ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let duration: DurationHistogram
    private let inFlight: Gauge

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        duration = registry.makeDurationHistogram(
            name: "imago_http_request_duration_seconds",
            buckets: [.milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                      .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)],
            help: "Time from a request's arrival to its response"
        )
        inFlight = registry.makeGauge(name: "imago_http_requests_in_flight", help: "Requests being answered")
    }

    /// Counts an answer served from the result cache.
    func resultCacheHit() {
        registry.makeCounter(name: "imago_result_cache_hits_total", help: "Answers served from the encoded-result cache").increment()
    }

    /// Counts a request in flight until `end` is called with its status.
    func begin() -> @Sendable (Int) -> Void {
        let start = ContinuousClock.now
        inFlight.increment()
        return { [registry, duration, inFlight] status in
            inFlight.decrement()
            duration.record(start.duration(to: .now))
            registry.makeCounter(name: "imago_http_requests_total", labels: [("status", String(status))], help: "Requests answered, by status").increment()
        }
    }

    /// The Prometheus text exposition of everything in the registry, with
    /// the transformation queue's length as it is now.
    func exposition(queueLength: Int) -> String {
        registry.makeGauge(name: "imago_transformation_queue_length", help: "Requests waiting for a transformation slot").set(to: Double(queueLength))
        return registry.emitToString()
    }
}
