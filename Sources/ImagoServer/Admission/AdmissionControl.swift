import Foundation
import Imago
import ImagoConcurrency

/// Which requests may download their source and transform it, and when.
///
/// A request is admitted into the queue at once or refused at once (429 with
/// Retry-After) when `queueCapacity` requests are already waiting. It then
/// waits for a download turn, downloads, and waits for one of `limit`
/// transformation turns; a request whose waiting for turns passes
/// `queueTimeout` is refused then (503). Downloads do not hold a
/// transformation turn, so the cores stay busy while sources arrive; and
/// since a request keeps its download turn until its transformation begins,
/// at most `downloadLimit` sources wait in memory for one.
final class AdmissionControl: Sendable {
    let limit: Int
    let queueCapacity: Int
    let queueTimeout: Duration
    private let queued = Locked(0)
    /// ``downloadLimit(transformations:)`` turns.
    private let downloads: WeightedSemaphore
    private let transformations: WeightedSemaphore

    init(limit: Int, queueCapacity: Int, queueTimeout: Duration) {
        self.limit = max(1, limit)
        self.queueCapacity = max(0, queueCapacity)
        self.queueTimeout = queueTimeout
        downloads = WeightedSemaphore(capacity: Self.downloadLimit(transformations: limit))
        transformations = WeightedSemaphore(capacity: self.limit)
    }

    /// How many sources may be downloading at once.
    var downloadLimit: Int { downloads.capacity }

    /// The download turns for `transformations` at once: twice as many,
    /// enough for the next sources to be there when a transformation ends,
    /// few enough to bound their memory. The service's one limit on
    /// downloads: the pipeline's limiter and the HTTP client's connections
    /// are sized to it, so that neither holds a download on its own.
    static func downloadLimit(transformations: Int) -> Int { 2 * max(1, transformations) }

    /// Requests admitted that have not begun their transformation.
    var queueLength: Int { queued.withLock { $0 } }

    /// Admits a request into the queue, or refuses it (429). The ticket
    /// gives back whatever it holds when it ends.
    func admit() throws(ServiceError) -> Ticket {
        let admitted = queued.withLock { count in
            guard count < queueCapacity else { return false }
            count += 1
            return true
        }
        guard admitted else { throw ServiceError.queueFull(waiting: queueCapacity, transformations: limit) }
        return Ticket(self)
    }

    /// One admitted request's place: in the queue, then a download turn,
    /// then a transformation turn, its waits for both within the queue
    /// timeout (the download between them does not count). Used by one
    /// task at a time.
    final class Ticket {
        private enum Stage {
            case queued
            case downloading(WeightedSemaphore.Ticket)
            case transforming(WeightedSemaphore.Ticket)
            case ended
        }

        private let admission: AdmissionControl
        private var stage = Stage.queued
        /// What is left of the queue timeout for waiting on turns.
        private var patience: Duration

        fileprivate init(_ admission: AdmissionControl) {
            self.admission = admission
            patience = admission.queueTimeout
        }

        /// Waits for a download turn (503 once the queue timeout is spent).
        func download() async throws(ServiceError) {
            guard case .queued = stage else { return }
            stage = .downloading(try await turn(of: admission.downloads))
        }

        /// Waits for a transformation turn (503 once the queue timeout is spent), then
        /// gives back the download turn and the place in the queue.
        func transform() async throws(ServiceError) {
            switch stage {
            case .queued, .downloading:
                let turn = try await turn(of: admission.transformations)
                leaveQueue()
                stage = .transforming(turn)
            case .transforming, .ended: return
            }
        }

        /// Gives back whatever the ticket holds; later calls do nothing.
        func end() {
            switch stage {
            case .queued, .downloading: leaveQueue()
            case .transforming(let turn): admission.transformations.release(turn)
            case .ended: break
            }
            stage = .ended
        }

        private func leaveQueue() {
            if case .downloading(let turn) = stage { admission.downloads.release(turn) }
            admission.queued.withLock { $0 -= 1 }
        }

        private func turn(of semaphore: WeightedSemaphore) async throws(ServiceError) -> WeightedSemaphore.Ticket {
            let start = ContinuousClock.now
            let turn = await semaphore.acquire(deadline: start + patience)
            patience -= ContinuousClock.now - start
            guard let turn else {
                throw Task.isCancelled ? ServiceError.cancelled(key: "") : ServiceError.queueTimedOut(after: admission.queueTimeout)
            }
            return turn
        }
    }
}
