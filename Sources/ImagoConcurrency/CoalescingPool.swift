/// A failure that can say "this waiter left": what a waiter of a
/// ``CoalescingPool`` gets when it cancels.
package protocol CoalescingFailure: Error {
    static func cancelled(key: String) -> Self
}

/// Runs one piece of work per key, however many callers ask for it: the
/// pipeline's shared downloads and decodes, and the service's answers.
///
/// Each caller subscribes as a waiter (or awaits ``value(for:priority:operation:)``). The work starts with the first
/// waiter, runs at the highest waiter's priority, and is cancelled only
/// when every waiter has left. Every waiter gets exactly one completion:
/// the work's outcome, or a cancellation if it left first. When the work
/// ends (or is abandoned) its key is free, so the next caller starts anew.
package final class CoalescingPool<
    Key: Hashable & Sendable & CustomStringConvertible, Value: Sendable, Failure: CoalescingFailure, Progress: Sendable
>: Sendable {
    package typealias Priority = WorkPriority
    package typealias Outcome = Result<Value, Failure>

    /// What a waiter hears: progress (optional) and the one completion.
    package struct Observer: Sendable {
        package var progress: (@Sendable (Progress) -> Void)?
        package var completion: @Sendable (Outcome) -> Void

        package init(progress: (@Sendable (Progress) -> Void)? = nil, completion: @escaping @Sendable (Outcome) -> Void) {
            self.progress = progress
            self.completion = completion
        }
    }

    /// A waiter's handle: leave, or change its priority.
    package struct Subscription: Sendable {
        fileprivate let pool: CoalescingPool
        fileprivate let key: Key
        fileprivate let generation: UInt64
        fileprivate let waiter: UInt64
        /// Whether the caller joined work that was already running.
        package let joined: Bool

        /// Leaves the work: the waiter completes with a cancellation at once.
        package func cancel() { pool.leave(self) }

        /// Changes this waiter's priority, and the work's if it is now the highest.
        package func setPriority(_ priority: Priority) { pool.setPriority(priority, for: self) }
    }

    /// What the work sees of its waiters.
    package struct Context: Sendable {
        fileprivate let pool: CoalescingPool
        fileprivate let key: Key
        fileprivate let generation: UInt64

        /// Calls `handler` with the work's current priority now and whenever
        /// it changes. Handlers run with the pool's lock held: they must be
        /// internal and take only locks that never call back into this pool.
        package func observePriority(_ handler: @escaping @Sendable (Priority) -> Void) {
            pool.observePriority(key: key, generation: generation, handler)
        }

        /// The highest priority among the waiters.
        package var priority: Priority { pool.priority(key: key, generation: generation) }

        /// Tells every waiter how far the work has come.
        package func reportProgress(_ progress: Progress) {
            pool.reportProgress(progress, key: key, generation: generation)
        }
    }

    private struct Waiter {
        var priority: Priority
        var observer: Observer
    }

    private struct Work {
        let generation: UInt64
        var waiters: [UInt64: Waiter] = [:]
        /// Waiters per priority level, so that the highest is found in O(1).
        var priorityCounts = [Int](repeating: 0, count: Priority.allCases.count)
        var priority: Priority
        /// Stops the work; set once it has started.
        var cancel: (@Sendable () -> Void)?
        var priorityObservers: [@Sendable (Priority) -> Void] = []

        mutating func add(_ id: UInt64, _ waiter: Waiter) {
            waiters[id] = waiter
            priorityCounts[waiter.priority.rawValue] += 1
        }

        mutating func remove(_ id: UInt64) -> Waiter? {
            guard let waiter = waiters.removeValue(forKey: id) else { return nil }
            priorityCounts[waiter.priority.rawValue] -= 1
            return waiter
        }

        /// Recomputes the work's priority; tells the observers if it changed.
        mutating func updatePriority() {
            guard let level = priorityCounts.lastIndex(where: { $0 > 0 }), let highest = Priority(rawValue: level),
                highest != priority
            else { return }
            priority = highest
            for handler in priorityObservers { handler(highest) }
        }
    }

    private struct State {
        var works: [Key: Work] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    package init() {}

    /// Joins the work for `key` (starting `operation` in a task of its own
    /// if none runs) and waits for its outcome. A cancelled caller leaves
    /// at once with `Failure.cancelled`; the work stops when the last one
    /// leaves. `subscribed` hears, as soon as the caller is a waiter,
    /// whether it joined work already running.
    package func value(
        for key: Key, priority: Priority, subscribed: (_ joined: Bool) -> Void = { _ in },
        operation: @escaping @Sendable (Context) async -> Outcome
    ) async -> Outcome {
        let subscription = Locked<Subscription?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let waiter = subscribe(
                    key: key, priority: priority, observer: .init(completion: { continuation.resume(returning: $0) }), operation: operation)
                subscription.withLock { $0 = waiter }
                subscribed(waiter.joined)
                // A cancellation that came before the subscription was recorded.
                if Task.isCancelled { waiter.cancel() }
            }
        } onCancel: {
            subscription.withLock { $0 }?.cancel()
        }
    }

    /// Joins the work for `key`, starting `operation` in a task of its own if none runs.
    package func subscribe(
        key: Key,
        priority: Priority,
        observer: Observer,
        operation: @escaping @Sendable (Context) async -> Outcome
    ) -> Subscription {
        subscribe(key: key, priority: priority, observer: observer) { context, complete in
            // Made in this nonisolated function, the task runs on no actor (a
            // UI caller's work would otherwise run on the main actor), and it
            // inherits the starting caller's task-local values: its trace,
            // which the work's spans join.
            let task = Task(priority: priority.taskPriority) { complete(await operation(context)) }
            return { task.cancel() }
        }
    }

    /// Joins the work for `key`, starting it with `start` if none runs.
    /// `start` must not block: it hands the work to a thread or a task, which
    /// calls `complete` once (from any thread), and returns what stops the work.
    package func subscribe(
        key: Key,
        priority: Priority,
        observer: Observer,
        start: @escaping @Sendable (Context, _ complete: @escaping @Sendable (Outcome) -> Void) -> @Sendable () -> Void
    ) -> Subscription {
        let (subscription, isNew) = state.withLock { state in
            let waiter = state.nextID
            state.nextID += 1
            // Taken out of the dictionary while changed, so that its waiters are never copied.
            let existing = state.works.removeValue(forKey: key)
            var work = existing ?? Work(generation: waiter, priority: priority)
            work.add(waiter, Waiter(priority: priority, observer: observer))
            if existing != nil { work.updatePriority() }
            state.works[key] = work
            let subscription = Subscription(pool: self, key: key, generation: work.generation, waiter: waiter, joined: existing != nil)
            return (subscription, existing == nil)
        }
        if isNew { self.start(subscription, start) }
        return subscription
    }

    /// The number of keys with work in flight.
    package var count: Int { state.withLock { $0.works.count } }

    private func start(
        _ subscription: Subscription,
        _ start: @Sendable (Context, @escaping @Sendable (Outcome) -> Void) -> @Sendable () -> Void
    ) {
        let key = subscription.key
        let generation = subscription.generation
        let cancel = start(Context(pool: self, key: key, generation: generation)) { outcome in
            self.finish(key: key, generation: generation, outcome: outcome)
        }
        // The work may have completed, or every waiter left, before this.
        let abandoned = state.withLock { state in
            guard state.works[key]?.generation == generation else { return true }
            state.works[key]!.cancel = cancel
            return false
        }
        if abandoned { cancel() }
    }

    private func finish(key: Key, generation: UInt64, outcome: Outcome) {
        let waiters = state.withLock { state -> [Waiter] in
            guard state.works[key]?.generation == generation else { return [] }
            return Array(state.works.removeValue(forKey: key)!.waiters.values)
        }
        for waiter in waiters { waiter.observer.completion(outcome) }
    }

    private func leave(_ subscription: Subscription) {
        let (waiter, abandon) = state.withLock { state -> (Waiter?, (@Sendable () -> Void)?) in
            guard var work = takeWork(for: subscription, from: &state) else { return (nil, nil) }
            let waiter = work.remove(subscription.waiter)
            if work.waiters.isEmpty { return (waiter, work.cancel) }
            work.updatePriority()
            state.works[subscription.key] = work
            return (waiter, nil)
        }
        abandon?()
        waiter?.observer.completion(.failure(Failure.cancelled(key: subscription.key.description)))
    }

    private func setPriority(_ priority: Priority, for subscription: Subscription) {
        state.withLock { state in
            guard var work = takeWork(for: subscription, from: &state) else { return }
            if var waiter = work.remove(subscription.waiter) {
                waiter.priority = priority
                work.add(subscription.waiter, waiter)
                work.updatePriority()
            }
            state.works[subscription.key] = work
        }
    }

    /// Removes and returns the subscription's work, if it is still the one running for its key.
    private func takeWork(for subscription: Subscription, from state: inout State) -> Work? {
        guard state.works[subscription.key]?.generation == subscription.generation else { return nil }
        return state.works.removeValue(forKey: subscription.key)
    }

    private func observePriority(key: Key, generation: UInt64, _ handler: @escaping @Sendable (Priority) -> Void) {
        state.withLock { state in
            guard state.works[key]?.generation == generation else { return }
            state.works[key]!.priorityObservers.append(handler)
            handler(state.works[key]!.priority)
        }
    }

    private func priority(key: Key, generation: UInt64) -> Priority {
        state.withLock { state in
            guard let work = state.works[key], work.generation == generation else { return .normal }
            return work.priority
        }
    }

    private func reportProgress(_ progress: Progress, key: Key, generation: UInt64) {
        let handlers = state.withLock { state -> [@Sendable (Progress) -> Void] in
            guard let work = state.works[key], work.generation == generation else { return [] }
            return work.waiters.values.compactMap(\.observer.progress)
        }
        for handler in handlers { handler(progress) }
    }
}
