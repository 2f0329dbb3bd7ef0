import Foundation
import ImagoConcurrency

@testable import Imago
@testable import ImagoCaching

/// A clock that moves only when a test advances it, for time-to-live and
/// expiry tests that must not sleep. Usable both as a `Clock` (memory cache)
/// and as a date source (disk cache).
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Locked(Instant(offset: .zero))
    private let epoch: Date

    init(epoch: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        self.epoch = epoch
    }

    var now: Instant { current.withLock { $0 } }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// The clock's time as a date, for `DiskCache.Configuration.currentDate`.
    var date: Date {
        let offset = now.offset.components
        return epoch.addingTimeInterval(Double(offset.seconds) + Double(offset.attoseconds) / 1e18)
    }

    func advance(by duration: Duration) {
        current.withLock { $0 = $0.advanced(by: duration) }
    }

    /// Not used by the code under test; returns at once rather than hang a test.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
    }
}
