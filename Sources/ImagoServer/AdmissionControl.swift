import Foundation
import Imago

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
    /// Twice the transformations: enough for the next sources to be there
    /// when a transformation ends, few enough to bound their memory.
    var downloadLimit: Int { downloads.limit }
    private let queued = Locked(0)
    private let downloads: Turns
    private let transformations: Turns

    init(limit: Int, queueCapacity: Int, queueTimeout: Duration) {
        self.limit = max(1, limit)
        self.queueCapacity = max(0, queueCapacity)
        self.queueTimeout = queueTimeout
        downloads = Turns(limit: 2 * self.limit)
        transformations = Turns(limit: self.limit)
    }

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
        guard admitted else {
            throw ServiceError(
                status: 429, message: "too many requests: \(queueCapacity) waiting for \(limit) transformations", headers: [("Retry-After", "1")]
            )
        }
        return Ticket(self)
    }

    /// One admitted request's place: in the queue, then a download turn,
    /// then a transformation turn. Used by one task at a time.
    final class Ticket {
        private enum Stage { case queued, downloading, transforming, ended }
        private let admission: AdmissionControl
        private var stage = Stage.queued
        /// What is left of the queue timeout for waiting on turns.
        private var patience: Duration

        fileprivate init(_ admission: AdmissionControl) {
            self.admission = admission
            patience = admission.queueTimeout
        }

        /// Waits for a download turn (503 past the queue timeout).
        func download() async throws(ServiceError) {
            guard stage == .queued else { return }
            try await wait(for: admission.downloads)
            stage = .downloading
        }

        /// Waits for a transformation turn (503 past the queue timeout),
        /// then gives back the download turn and the place in the queue.
        func transform() async throws(ServiceError) {
            guard stage == .queued || stage == .downloading else { return }
            try await wait(for: admission.transformations)
            leaveQueue()
            stage = .transforming
        }

        /// Gives back whatever the ticket holds; later calls do nothing.
        func end() {
            switch stage {
            case .queued, .downloading: leaveQueue()
            case .transforming: admission.transformations.release()
            case .ended: break
            }
            stage = .ended
        }

        private func leaveQueue() {
            if stage == .downloading { admission.downloads.release() }
            admission.queued.withLock { $0 -= 1 }
        }

        private func wait(for turns: Turns) async throws(ServiceError) {
            let start = ContinuousClock.now
            let granted = await turns.acquire(within: patience)
            patience -= ContinuousClock.now - start
            guard granted else {
                throw ServiceError(
                    status: 503, message: "no transformation turn within \(admission.queueTimeout); try again later", headers: [("Retry-After", "1")]
                )
            }
        }
    }
}

/// A counting semaphore whose waiters are served first come, first served,
/// and give up when their time runs out or their task is cancelled.
final class Turns: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var taken = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes a turn, waiting at most `timeout` for one; false if none came
    /// (or the task was cancelled).
    func acquire(within timeout: Duration) async -> Bool {
        let id: UInt64? = state.withLock { state in
            if state.taken < limit {
                state.taken += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        var timer: Task<Void, any Error>?
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Cancelled before the waiter was in place: the handler found nothing to refuse.
                let cancelled = state.withLock { state in
                    if Task.isCancelled || timeout <= .zero { return true }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return false
                }
                if cancelled {
                    continuation.resume(returning: false)
                } else {
                    timer = Task {
                        try await Task.sleep(for: timeout)
                        self.refuse(id)
                    }
                }
            }
        } onCancel: {
            refuse(id)
        }
    }

    /// Hands the turn to the first waiter, or frees it.
    func release() {
        let next = state.withLock { state -> Waiter? in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.taken -= 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }

    /// Takes `id` out of the queue, if it is still there, and tells it no.
    private func refuse(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }
}
