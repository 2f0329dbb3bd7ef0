/// A counting limit for the pipeline and the service: at most `capacity` units in
/// use at once (downloads, transformations, bytes of decoded pixels), and
/// at most `perKeyCapacity` with the same key (a host). Waiters are served
/// highest priority first, first come first served within a priority; a
/// waiter whose key is full lets others go ahead, one that does not fit
/// the free units holds the queue (so a large one is never starved by
/// small ones). A weight above the capacity counts as the whole capacity:
/// it runs alone rather than never. A waiter leaves when its task is
/// cancelled or its deadline passes. Admission can be suspended.
///
/// Use is two-phase so that a priority change can never be lost between
/// joining the queue and waiting: ``enqueue(weight:key:priority:)`` takes a
/// place (and may be admitted at once), ``wait(_:deadline:)`` suspends until
/// admitted, and ``release(_:)`` gives the units back.
///
/// ```swift
/// let ticket = semaphore.enqueue(key: host, priority: .normal)
/// guard await semaphore.wait(ticket) else { return }   // cancelled while queued
/// defer { semaphore.release(ticket) }
/// ```
///
/// One watchdog task refuses the waiters whose deadline passed, sleeping
/// until the earliest one, rather than a timer per waiter: a timer set and
/// cancelled for every request costs thread switches on every answer.
package final class WeightedSemaphore: Sendable {
    package typealias Priority = WorkPriority
    package typealias Ticket = UInt64

    fileprivate struct Waiter {
        var priority: Priority
        var key: String
        var weight: Int
        var deadline: ContinuousClock.Instant?
        var continuation: CheckedContinuation<Bool, Never>?
    }

    fileprivate enum Phase {
        case queued(Waiter)
        case running(key: String, weight: Int)
    }

    fileprivate struct State {
        let capacity: Int
        let perKeyCapacity: Int
        var isSuspended = false
        var inUse = 0
        var inUsePerKey: [String: Int] = [:]
        var phases: [Ticket: Phase] = [:]
        /// Places of queued tickets; `phases` holds each one's current priority.
        var queue = PriorityQueue<Ticket>()
        var nextTicket: Ticket = 0
        var queuedCount = 0
        /// The running watchdog's number and the deadline it sleeps until.
        var watchdog: (generation: UInt64, until: ContinuousClock.Instant)?
    }

    private let state: Locked<State>

    /// A semaphore of `capacity` units; `perKeyCapacity` defaults to
    /// `capacity` (no per-key limit).
    package init(capacity: Int, perKeyCapacity: Int? = nil) {
        let capacity = max(1, capacity)
        state = Locked(State(capacity: capacity, perKeyCapacity: min(capacity, max(1, perKeyCapacity ?? capacity))))
    }

    /// The units the semaphore hands out.
    package var capacity: Int { state.withLock { $0.capacity } }

    /// Joins the queue for `weight` units; the ticket may be admitted at once.
    package func enqueue(weight: Int = 1, key: String = "", priority: Priority = .normal) -> Ticket {
        let (ticket, admitted) = state.withLock { state in
            let ticket = state.nextTicket
            state.nextTicket += 1
            let weight = min(max(0, weight), state.capacity)
            state.phases[ticket] = .queued(Waiter(priority: priority, key: key, weight: weight))
            state.queue.append(ticket, at: priority)
            state.queuedCount += 1
            return (ticket, state.admitReady())
        }
        resume(admitted)
        return ticket
    }

    /// Waits until the ticket is admitted. Returns `false` if it left the
    /// queue first: cancelled (by ``cancel(_:)`` or by cancelling the
    /// calling task) or past `deadline`; the caller then has nothing to release.
    package func wait(_ ticket: Ticket, deadline: ContinuousClock.Instant? = nil) async -> Bool {
        // Admitted when it joined (the common case): no suspension.
        if isRunning(ticket) { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                enum Action {
                    case resume(Bool, admitting: [CheckedContinuation<Bool, Never>])
                    case wait
                    case watch(UInt64)
                }
                let action = state.withLock { state -> Action in
                    switch state.phases[ticket] {
                    case .running: return .resume(true, admitting: [])
                    case nil: return .resume(false, admitting: [])
                    case .queued(var waiter):
                        // Cancelled before the waiter was in place: the handler found nothing to take out.
                        if Task.isCancelled || deadline.map({ $0 <= .now }) == true {
                            state.phases[ticket] = nil
                            state.queuedCount -= 1
                            return .resume(false, admitting: state.admitReady())
                        }
                        waiter.continuation = continuation
                        waiter.deadline = deadline
                        state.phases[ticket] = .queued(waiter)
                        guard let deadline else { return .wait }
                        if let watchdog = state.watchdog, watchdog.until <= deadline { return .wait }
                        // No watchdog, or one that would wake too late: a new one (an older one ends when it next wakes).
                        state.nextTicket += 1
                        state.watchdog = (state.nextTicket, deadline)
                        return .watch(state.nextTicket)
                    }
                }
                switch action {
                case .resume(let admitted, let others):
                    continuation.resume(returning: admitted)
                    resume(others)
                case .wait: break
                case .watch(let generation): Task { await self.watch(generation) }
                }
            }
        } onCancel: {
            cancel(ticket)
        }
    }

    /// Takes `weight` units, waiting until they fit; `nil` if the calling
    /// task was cancelled or `deadline` passed first.
    package func acquire(
        weight: Int = 1, key: String = "", priority: Priority = .normal, deadline: ContinuousClock.Instant? = nil
    ) async -> Ticket? {
        let ticket = enqueue(weight: weight, key: key, priority: priority)
        return await wait(ticket, deadline: deadline) ? ticket : nil
    }

    /// Takes a queued ticket out of the queue; an admitted one is left to its owner.
    package func cancel(_ ticket: Ticket) {
        refuse { phases in
            guard case .queued = phases[ticket] else { return [] }
            return [ticket]
        }
    }

    /// Gives back an admitted ticket's units and admits the next waiters.
    package func release(_ ticket: Ticket) {
        let admitted = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            guard case .running(let key, let weight) = state.phases.removeValue(forKey: ticket) else { return [] }
            state.inUse -= weight
            state.inUsePerKey[key, default: weight] -= weight
            if state.inUsePerKey[key] == 0 { state.inUsePerKey[key] = nil }
            return state.admitReady()
        }
        resume(admitted)
    }

    /// Moves a queued ticket to another priority (to the back of that level).
    /// Admits no one: it runs under its callers' locks. A move can free
    /// no units, and for tickets of one unit nothing that waits can fit.
    package func setPriority(_ priority: Priority, for ticket: Ticket) {
        state.withLock { state in
            guard case .queued(var waiter) = state.phases[ticket], waiter.priority != priority else { return }
            waiter.priority = priority
            state.phases[ticket] = .queued(waiter)
            state.queue.append(ticket, at: priority)
        }
    }

    /// Stops admitting queued work; running work goes on.
    package func suspend() {
        state.withLock { $0.isSuspended = true }
    }

    /// Admits queued work again.
    package func resume() {
        let admitted = state.withLock { state in
            state.isSuspended = false
            return state.admitReady()
        }
        resume(admitted)
    }

    /// Whether admission is suspended.
    package var isSuspended: Bool { state.withLock { $0.isSuspended } }

    /// Whether `ticket` has been admitted and not yet released.
    package func isRunning(_ ticket: Ticket) -> Bool {
        state.withLock { state in
            if case .running = state.phases[ticket] { return true }
            return false
        }
    }

    /// Units in use, and tickets waiting.
    package var counts: (inUse: Int, queued: Int) { state.withLock { ($0.inUse, $0.queuedCount) } }

    private func resume(_ continuations: [CheckedContinuation<Bool, Never>]) {
        for continuation in continuations { continuation.resume(returning: true) }
    }

    /// Takes the queued tickets `select` picks out of the queue and tells
    /// their waiters no; admits whoever they were holding back.
    private func refuse(_ select: ([Ticket: Phase]) -> [Ticket]) {
        let (refused, admitted) = state.withLock { state -> ([CheckedContinuation<Bool, Never>], [CheckedContinuation<Bool, Never>]) in
            var refused: [CheckedContinuation<Bool, Never>] = []
            for ticket in select(state.phases) {
                guard case .queued(let waiter) = state.phases.removeValue(forKey: ticket) else { continue }
                state.queuedCount -= 1
                if let continuation = waiter.continuation { refused.append(continuation) }
            }
            return (refused, refused.isEmpty ? [] : state.admitReady())
        }
        for continuation in refused { continuation.resume(returning: false) }
        resume(admitted)
    }

    /// Refuses the waiters whose deadline has passed, then sleeps until the
    /// next deadline, as long as there are such waiters and it is the current watchdog.
    private func watch(_ generation: UInt64) async {
        while true {
            let now = ContinuousClock.now
            refuse { phases in
                phases.compactMap { ticket, phase in
                    guard case .queued(let waiter) = phase, let deadline = waiter.deadline, deadline <= now else { return nil }
                    return ticket
                }
            }
            let next = state.withLock { state -> ContinuousClock.Instant? in
                guard state.watchdog?.generation == generation else { return nil }
                let earliest = state.phases.values.compactMap { phase -> ContinuousClock.Instant? in
                    guard case .queued(let waiter) = phase, waiter.continuation != nil else { return nil }
                    return waiter.deadline
                }.min()
                guard let earliest else {
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
}

extension WeightedSemaphore.State {
    /// Admits queued tickets while they fit; returns the continuations to resume.
    mutating func admitReady() -> [CheckedContinuation<Bool, Never>] {
        var resumed: [CheckedContinuation<Bool, Never>] = []
        while !isSuspended, let ticket = nextAdmissible(), case .queued(let waiter) = phases[ticket] {
            phases[ticket] = .running(key: waiter.key, weight: waiter.weight)
            queuedCount -= 1
            inUse += waiter.weight
            inUsePerKey[waiter.key, default: 0] += waiter.weight
            if let continuation = waiter.continuation { resumed.append(continuation) }
        }
        return resumed
    }

    /// Removes and returns the highest-priority queued ticket whose key has
    /// room, if it fits the free units; `nil` when it does not (it keeps
    /// its place at the head) or when no key has room.
    private mutating func nextAdmissible() -> WeightedSemaphore.Ticket? {
        let free = capacity - inUse
        let (phases, inUsePerKey, capacity, perKeyCapacity) = (phases, inUsePerKey, capacity, perKeyCapacity)
        return queue.removeFirst(
            isQueued: { ticket, priority in
                if case .queued(let waiter) = phases[ticket], waiter.priority == priority { return true }
                return false
            },
            decide: { ticket in
                guard case .queued(let waiter) = phases[ticket] else { return .skip }
                // A full key lets others go ahead (with no per-key limit, the whole capacity is the only one).
                if perKeyCapacity < capacity, inUsePerKey[waiter.key, default: 0] + min(waiter.weight, perKeyCapacity) > perKeyCapacity {
                    return .skip
                }
                return waiter.weight <= free ? .take : .stop
            }
        )
    }
}
