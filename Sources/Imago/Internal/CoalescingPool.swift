/// Runs one piece of work per key, however many callers ask for it.
///
/// Each caller subscribes as a waiter. The work starts with the first
/// waiter, runs at the highest waiter's priority, and is cancelled only
/// when every waiter has left. Every waiter gets exactly one completion:
/// the work's outcome, or a cancellation if it left first. When the work
/// ends (or is abandoned) its key is free, so the next caller starts anew.
final class CoalescingPool<Value: Sendable>: Sendable {
    typealias Priority = ImageRequest.Priority
    typealias Outcome = Result<Value, ImagePipeline.Error>

    /// What a waiter hears: progress (optional) and the one completion.
    struct Observer: Sendable {
        var progress: (@Sendable (DownloadProgress) -> Void)?
        var completion: @Sendable (Outcome) -> Void
    }

    /// A waiter's handle: leave, or change its priority.
    struct Subscription: Sendable {
        fileprivate let pool: CoalescingPool
        fileprivate let key: String
        fileprivate let generation: UInt64
        fileprivate let waiter: UInt64
        /// Whether the caller joined work that was already running.
        let joined: Bool

        /// Leaves the work: the waiter completes with a cancellation at once.
        func cancel() { pool.leave(self) }

        /// Changes this waiter's priority, and the work's if it is now the highest.
        func setPriority(_ priority: Priority) { pool.setPriority(priority, for: self) }
    }

    /// What the work sees of its waiters.
    struct Context: Sendable {
        fileprivate let pool: CoalescingPool
        fileprivate let key: String
        fileprivate let generation: UInt64

        /// Calls `handler` with the work's current priority now and whenever
        /// it changes. Handlers run with the pool's lock held: they must be
        /// internal and take only locks that never call back into this pool.
        func observePriority(_ handler: @escaping @Sendable (Priority) -> Void) {
            pool.observePriority(key: key, generation: generation, handler)
        }

        /// The highest priority among the waiters.
        var priority: Priority { pool.priority(key: key, generation: generation) }

        /// Tells every waiter how far the work has come.
        func reportProgress(_ progress: DownloadProgress) {
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
        var priority: Priority
        var task: Task<Void, Never>?
        var priorityObservers: [@Sendable (Priority) -> Void] = []

        mutating func updatePriority() -> Bool {
            let highest = waiters.values.map(\.priority).max() ?? priority
            guard highest != priority else { return false }
            priority = highest
            return true
        }
    }

    private struct State {
        var works: [String: Work] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// Joins the work for `key`, starting it with `operation` if none runs.
    func subscribe(
        key: String,
        priority: Priority,
        observer: Observer,
        operation: @escaping @Sendable (Context) async -> Outcome
    ) -> Subscription {
        let (subscription, isNew) = state.withLock { state in
            let waiter = state.nextID
            state.nextID += 1
            var isNew = false
            if state.works[key] == nil {
                state.works[key] = Work(generation: waiter, priority: priority)
                isNew = true
            }
            state.works[key]!.waiters[waiter] = Waiter(priority: priority, observer: observer)
            let generation = state.works[key]!.generation
            if !isNew && state.works[key]!.updatePriority() {
                let newPriority = state.works[key]!.priority
                for handler in state.works[key]!.priorityObservers { handler(newPriority) }
            }
            let subscription = Subscription(pool: self, key: key, generation: generation, waiter: waiter, joined: !isNew)
            return (subscription, isNew)
        }
        if isNew { start(subscription, priority: priority, operation: operation) }
        return subscription
    }

    /// The number of keys with work in flight.
    var count: Int { state.withLock { $0.works.count } }

    private func start(_ subscription: Subscription, priority: Priority, operation: @escaping @Sendable (Context) async -> Outcome) {
        let key = subscription.key
        let generation = subscription.generation
        let context = Context(pool: self, key: key, generation: generation)
        // Detached: the work must not inherit the caller's actor (a UI caller
        // would otherwise run it on the main actor).
        let task = Task.detached(priority: priority.taskPriority) {
            let outcome = await operation(context)
            self.finish(key: key, generation: generation, outcome: outcome)
        }
        let abandoned = state.withLock { state in
            guard state.works[key]?.generation == generation else { return true }
            state.works[key]!.task = task
            return false
        }
        if abandoned { task.cancel() }
    }

    private func finish(key: String, generation: UInt64, outcome: Outcome) {
        let waiters = state.withLock { state -> [Waiter] in
            guard state.works[key]?.generation == generation else { return [] }
            return Array(state.works.removeValue(forKey: key)!.waiters.values)
        }
        for waiter in waiters { waiter.observer.completion(outcome) }
    }

    private func leave(_ subscription: Subscription) {
        let (waiter, abandonedTask) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
            guard var work = state.works[subscription.key], work.generation == subscription.generation,
                  let waiter = work.waiters.removeValue(forKey: subscription.waiter) else { return (nil, nil) }
            if work.waiters.isEmpty {
                state.works[subscription.key] = nil
                return (waiter, work.task)
            }
            if work.updatePriority() {
                for handler in work.priorityObservers { handler(work.priority) }
            }
            state.works[subscription.key] = work
            return (waiter, nil)
        }
        abandonedTask?.cancel()
        waiter?.observer.completion(.failure(.cancelled(key: subscription.key)))
    }

    private func setPriority(_ priority: Priority, for subscription: Subscription) {
        state.withLock { state in
            guard var work = state.works[subscription.key], work.generation == subscription.generation,
                  work.waiters[subscription.waiter] != nil else { return }
            work.waiters[subscription.waiter]!.priority = priority
            if work.updatePriority() {
                for handler in work.priorityObservers { handler(work.priority) }
            }
            state.works[subscription.key] = work
        }
    }

    private func observePriority(key: String, generation: UInt64, _ handler: @escaping @Sendable (Priority) -> Void) {
        state.withLock { state in
            guard state.works[key]?.generation == generation else { return }
            state.works[key]!.priorityObservers.append(handler)
            handler(state.works[key]!.priority)
        }
    }

    private func priority(key: String, generation: UInt64) -> Priority {
        state.withLock { state in
            guard let work = state.works[key], work.generation == generation else { return .normal }
            return work.priority
        }
    }

    private func reportProgress(_ progress: DownloadProgress, key: String, generation: UInt64) {
        let handlers = state.withLock { state -> [@Sendable (DownloadProgress) -> Void] in
            guard let work = state.works[key], work.generation == generation else { return [] }
            return work.waiters.values.compactMap(\.observer.progress)
        }
        for handler in handlers { handler(progress) }
    }
}

extension CoalescingPool {
    /// Joins the work for `key` and waits for its outcome; cancelling the
    /// calling task leaves the work (which goes on for other waiters).
    func value(
        key: String,
        priority: Priority,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil,
        onSubscribe: (Subscription) -> Void = { _ in },
        operation: @escaping @Sendable (Context) async -> Outcome
    ) async -> Outcome {
        let box = Locked<Subscription?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let observer = Observer(progress: progress) { continuation.resume(returning: $0) }
                let subscription = subscribe(key: key, priority: priority, observer: observer, operation: operation)
                box.withLock { $0 = subscription }
                onSubscribe(subscription)
                if Task.isCancelled { subscription.cancel() }
            }
        } onCancel: {
            box.withLock { $0 }?.cancel()
        }
    }
}
