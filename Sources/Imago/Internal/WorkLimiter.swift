/// Admits at most `limit` operations at once, and at most `perKeyLimit` with
/// the same key (a host), highest priority first and first come first served
/// within a priority. Admission can be suspended.
///
/// Use is two-phase so that a priority change can never be lost between
/// joining the queue and waiting: ``enqueue(key:priority:)`` takes a place
/// (and may be admitted at once), ``wait(_:)`` suspends until admitted, and
/// ``release(_:)`` gives the slot back.
///
/// ```swift
/// let ticket = limiter.enqueue(key: host, priority: .normal)
/// guard await limiter.wait(ticket) else { return }   // cancelled while queued
/// defer { limiter.release(ticket) }
/// ```
final class WorkLimiter: Sendable {
    typealias Priority = ImageRequest.Priority
    typealias Ticket = UInt64

    fileprivate enum Phase {
        case queued(priority: Priority, key: String, continuation: CheckedContinuation<Bool, Never>?)
        case running(key: String)
    }

    fileprivate struct State {
        var limit: Int
        var perKeyLimit: Int
        var isSuspended = false
        var running = 0
        var runningPerKey: [String: Int] = [:]
        var phases: [Ticket: Phase] = [:]
        /// Places of queued tickets; `phases` holds each one's current priority.
        var queue = PriorityQueue<Ticket>()
        var nextTicket: Ticket = 0
        var queuedCount = 0
    }

    private let state: Locked<State>

    /// Creates a limiter. `perKeyLimit` defaults to `limit` (no per-key limit).
    init(limit: Int, perKeyLimit: Int? = nil) {
        state = Locked(State(limit: max(1, limit), perKeyLimit: max(1, perKeyLimit ?? limit)))
    }

    /// Joins the queue; the ticket may be admitted at once.
    func enqueue(key: String = "", priority: Priority) -> Ticket {
        let (ticket, admitted) = state.withLock { state in
            let ticket = state.nextTicket
            state.nextTicket += 1
            state.phases[ticket] = .queued(priority: priority, key: key, continuation: nil)
            state.queue.append(ticket, at: priority)
            state.queuedCount += 1
            return (ticket, state.admitReady())
        }
        resume(admitted)
        return ticket
    }

    /// Waits until the ticket is admitted. Returns `false` if the ticket was
    /// cancelled (by ``cancel(_:)`` or by cancelling the calling task) while
    /// queued; the caller then has no slot to release.
    func wait(_ ticket: Ticket) async -> Bool {
        // Admitted when it joined (the common case): no suspension.
        if isRunning(ticket) { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let admitted: Bool? = state.withLock { state in
                    switch state.phases[ticket] {
                    case .running: return true
                    case .queued(let priority, let key, _):
                        state.phases[ticket] = .queued(priority: priority, key: key, continuation: continuation)
                        return nil
                    case nil: return false
                    }
                }
                if let admitted { continuation.resume(returning: admitted) }
            }
        } onCancel: {
            cancel(ticket)
        }
    }

    /// Takes a queued ticket out of the queue; an admitted one is left to its owner.
    func cancel(_ ticket: Ticket) {
        let continuation: CheckedContinuation<Bool, Never>? = state.withLock { state in
            guard case .queued(_, _, let continuation) = state.phases[ticket] else { return nil }
            state.phases[ticket] = nil
            state.queuedCount -= 1
            return continuation
        }
        continuation?.resume(returning: false)
    }

    /// Gives back an admitted ticket's slot and admits the next ones.
    func release(_ ticket: Ticket) {
        let admitted = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            guard case .running(let key) = state.phases.removeValue(forKey: ticket) else { return [] }
            state.running -= 1
            state.runningPerKey[key, default: 1] -= 1
            if state.runningPerKey[key] == 0 { state.runningPerKey[key] = nil }
            return state.admitReady()
        }
        resume(admitted)
    }

    /// Moves a queued ticket to another priority (to the back of that level).
    func setPriority(_ priority: Priority, for ticket: Ticket) {
        state.withLock { state in
            guard case .queued(let old, let key, let continuation) = state.phases[ticket], old != priority else { return }
            state.phases[ticket] = .queued(priority: priority, key: key, continuation: continuation)
            state.queue.append(ticket, at: priority)
        }
    }

    /// Stops admitting queued work; running work goes on.
    func suspend() {
        state.withLock { $0.isSuspended = true }
    }

    /// Admits queued work again.
    func resume() {
        let admitted = state.withLock { state in
            state.isSuspended = false
            return state.admitReady()
        }
        resume(admitted)
    }

    /// Whether admission is suspended.
    var isSuspended: Bool { state.withLock { $0.isSuspended } }

    /// Whether `ticket` has been admitted and not yet released.
    func isRunning(_ ticket: Ticket) -> Bool {
        state.withLock { state in
            if case .running = state.phases[ticket] { return true }
            return false
        }
    }

    /// How many tickets run and how many wait.
    var counts: (running: Int, queued: Int) { state.withLock { ($0.running, $0.queuedCount) } }

    private func resume(_ continuations: [CheckedContinuation<Bool, Never>]) {
        for continuation in continuations { continuation.resume(returning: true) }
    }
}

extension WorkLimiter.State {
    /// Admits queued tickets while there is room; returns the continuations to resume.
    mutating func admitReady() -> [CheckedContinuation<Bool, Never>] {
        var resumed: [CheckedContinuation<Bool, Never>] = []
        while !isSuspended, running < limit, let ticket = nextAdmissible(),
              case .queued(_, let key, let continuation) = phases[ticket] {
            phases[ticket] = .running(key: key)
            queuedCount -= 1
            running += 1
            runningPerKey[key, default: 0] += 1
            if let continuation { resumed.append(continuation) }
        }
        return resumed
    }

    /// Removes and returns the highest-priority queued ticket whose key has room.
    private mutating func nextAdmissible() -> WorkLimiter.Ticket? {
        queue.removeFirst(
            isQueued: { ticket, priority in
                if case .queued(priority, _, _) = phases[ticket] { return true }
                return false
            },
            accepting: { ticket in
                guard case .queued(_, let key, _) = phases[ticket] else { return false }
                return runningPerKey[key, default: 0] < perKeyLimit
            }
        )
    }
}
