import ImagoCaching
import ImagoConcurrency
import ServiceLifecycle

/// Whether the server takes new requests, as `/ready` tells a load
/// balancer: ready until a graceful shutdown begins, then draining.
///
/// Run it as the last service of the group: a group shuts its services
/// down in reverse order, so `/ready` answers 503 before the listener
/// closes and while the requests in flight drain.
public final class Readiness: Service, Sendable {
    private let draining = Locked(false)

    /// A readiness that is ready.
    public init() {}

    /// `false` once the graceful shutdown has begun.
    public var isReady: Bool { !draining.withLock { $0 } }

    /// Waits for the graceful shutdown, then marks the server draining.
    public func run() async throws {
        // Cancelled rather than shut down: the group is stopping anyway.
        try? await gracefulShutdown()
        draining.withLock { $0 = true }
    }
}
