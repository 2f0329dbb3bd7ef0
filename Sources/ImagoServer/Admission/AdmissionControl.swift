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
            throw ServiceError.queueFull(waiting: queueCapacity, transformations: limit)
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
                throw ServiceError.queueTimedOut(after: admission.queueTimeout)
            }
        }
    }
}

/// A counting semaphore whose waiters are served first come, first served,
/// and give up when their time runs out or their task is cancelled.
///
/// One watchdog task refuses the waiters whose time ran out, sleeping until
/// the earliest deadline, rather than a timer per waiter: a timer set and
/// cancelled for every request cost the server several thread switches an
/// answer.
final class Turns: Sendable {
    private struct Waiter {
        let id: UInt64
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var taken = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        /// The running watchdog's number and the deadline it sleeps until.
        var watchdog: (generation: UInt64, until: ContinuousClock.Instant)?
    }

    let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Waiters in the queue now.
    var waitingCount: Int { state.withLock { $0.waiters.count } }

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
        let deadline = ContinuousClock.now + timeout
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                enum Action { case refuse, wait, watch(UInt64) }
                let action = state.withLock { state -> Action in
                    // Cancelled before the waiter was in place: the handler found nothing to refuse.
                    if Task.isCancelled || timeout <= .zero { return .refuse }
                    state.waiters.append(Waiter(id: id, deadline: deadline, continuation: continuation))
                    if let watchdog = state.watchdog, watchdog.until <= deadline { return .wait }
                    // No watchdog, or one that would wake too late: a new one (an older one ends when it next wakes).
                    state.nextID += 1
                    state.watchdog = (state.nextID, deadline)
                    return .watch(state.nextID)
                }
                switch action {
                case .refuse: continuation.resume(returning: false)
                case .wait: break
                case .watch(let generation): Task { await self.watch(generation) }
                }
            }
        } onCancel: {
            refuse { $0.id == id }
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

    /// Refuses the waiters whose deadline has passed, then sleeps until the
    /// next deadline, as long as there are waiters and it is the current watchdog.
    private func watch(_ generation: UInt64) async {
        while true {
            refuse { $0.deadline <= .now }
            let next = state.withLock { state -> ContinuousClock.Instant? in
                guard state.watchdog?.generation == generation else { return nil }
                guard let earliest = state.waiters.map(\.deadline).min() else {
                    state.watchdog = nil
                    return nil
                }
                state.watchdog = (generation, earliest)
                return earliest
            }
            guard let next else { return }
            try? await Task.sleep(until: next, clock: .continuous)
        }
    }

    /// Takes the waiters that match out of the queue and tells them no.
    private func refuse(where matches: (Waiter) -> Bool) {
        let refused = state.withLock { state -> [Waiter] in
            let refused = state.waiters.filter(matches)
            if !refused.isEmpty { state.waiters.removeAll(where: matches) }
            return refused
        }
        for waiter in refused { waiter.continuation.resume(returning: false) }
    }
}
