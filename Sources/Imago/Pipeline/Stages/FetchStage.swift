import ImagoConcurrency

/// The one owner of a shared image fetch's current stage: a disk or decode
/// job queued on a thread pool, a running job, a download it waits for, or
/// done. Cancel and priority both go through it, so they reach the live
/// stage only: a finished stage is never re-prioritised or cancelled.
///
/// ```
/// starting ─► job (disk read) ─► running ─► download ─► job (decode) ─► running ─► done
///                                   └──────────────────────────────────►┘ (disk hit)
/// any state ─ cancel ─► cancelled (a queued job never runs, a download loses this waiter)
/// ```
///
/// Each stage is entered with the lock held, so a stage that ends quickly
/// (a job running on another thread) cannot move on before its start is
/// recorded, and a cancellation never misses the stage being entered.
/// Lock order: image fetch pool → this → data fetch pool or thread pool.
/// The stage keeps its own copy of the priority so that it never asks the
/// image fetch pool with its lock held.
final class FetchStage: Sendable {
    typealias Priority = ImageRequest.Priority

    enum Current {
        case starting
        case queued(PriorityThreadPool, PriorityThreadPool.Job)
        case running
        case download(DataFetches.Subscription)
        case done
        case cancelled
    }

    private struct State {
        var current = Current.starting
        var priority: Priority
    }

    private let state: Locked<State>

    /// Creates the stage of the fetch `context` belongs to and follows the
    /// fetch's priority from now on (one observer for the fetch's whole life).
    init(context: ImageFetches.Context) {
        state = Locked(State(priority: .normal))
        context.observePriority { [self] priority in setPriority(priority) }
    }

    /// The fetch's priority, as last heard.
    var priority: Priority { state.withLock { $0.priority } }

    /// The stage the fetch is in (for tests and logs).
    var current: Current { state.withLock { $0.current } }

    /// Queues `body` on `pool` as the fetch's stage, at the fetch's priority,
    /// unless the fetch was cancelled. `body` runs as the `running` stage.
    func submit(to pool: PriorityThreadPool, _ body: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if case .cancelled = state.current { return }
            let job = pool.submit(priority: state.priority) { [self] in
                if enter(.running) { body() }
            }
            state.current = .queued(pool, job)
        }
    }

    /// Makes the download `subscribe` joins (at the fetch's priority) the
    /// fetch's stage, unless the fetch was cancelled. `subscribe` must not
    /// complete synchronously.
    func joinDownload(_ subscribe: (Priority) -> DataFetches.Subscription) -> DataFetches.Subscription? {
        state.withLock { state in
            if case .cancelled = state.current { return nil }
            let subscription = subscribe(state.priority)
            state.current = .download(subscription)
            return subscription
        }
    }

    /// The fetch has completed: nothing is left to re-prioritise or cancel.
    func finish() {
        _ = enter(.done)
    }

    /// Moves to `stage` unless the fetch was cancelled; `false` if it was.
    private func enter(_ stage: Current) -> Bool {
        state.withLock { state in
            if case .cancelled = state.current { return false }
            state.current = stage
            return true
        }
    }

    /// Passes a new priority to the live stage: a queued job moves in its
    /// queue, a download changes this waiter's priority.
    private func setPriority(_ priority: Priority) {
        state.withLock { state in
            state.priority = priority
            switch state.current {
            case .queued(let pool, let job): pool.setPriority(priority, for: job)
            case .download(let subscription): subscription.setPriority(priority)
            case .starting, .running, .done, .cancelled: break
            }
        }
    }

    /// Stops the current stage: a queued job never runs, a download loses
    /// this waiter (and stops if it was the last). A running job finishes,
    /// but its result is dropped by the fetch's pool.
    func cancel() {
        let stopped = state.withLock { state -> Current in
            defer { state.current = .cancelled }
            return state.current
        }
        switch stopped {
        case .queued(let pool, let job): pool.cancel(job)
        case .download(let subscription): subscription.cancel()
        case .starting, .running, .done, .cancelled: break
        }
    }
}
