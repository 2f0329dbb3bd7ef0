/// Where a shared image fetch is now (a disk or decode job queued on a
/// thread pool, or a download it waits for), so that abandoning the fetch
/// stops whatever it is doing at that moment.
///
/// Each stage is entered with the lock held, so a stage that ends quickly
/// (a job running on another thread) cannot move on before its start is
/// recorded, and a cancellation never misses the stage being entered.
final class FetchStage: Sendable {
    private enum Current {
        case starting
        case job(PriorityThreadPool, PriorityThreadPool.Job)
        case download(CoalescingPool<FetchedData>.Subscription)
        case cancelled
    }

    private let current = Locked(Current.starting)

    /// Queues `body` on `pool` as the fetch's stage, at the fetch's priority
    /// and following its changes, unless the fetch was cancelled.
    func submit(to pool: PriorityThreadPool, context: CoalescingPool<FetchedImage>.Context, _ body: @escaping @Sendable () -> Void) {
        let job = current.withLock { current -> PriorityThreadPool.Job? in
            if case .cancelled = current { return nil }
            let job = pool.submit(priority: context.priority, body)
            current = .job(pool, job)
            return job
        }
        if let job { context.observePriority { pool.setPriority($0, for: job) } }
    }

    /// Makes the download `subscribe` joins the fetch's stage, unless the
    /// fetch was cancelled. `subscribe` must not complete synchronously.
    func download(_ subscribe: () -> CoalescingPool<FetchedData>.Subscription) -> CoalescingPool<FetchedData>.Subscription? {
        current.withLock { current in
            if case .cancelled = current { return nil }
            let subscription = subscribe()
            current = .download(subscription)
            return subscription
        }
    }

    /// Stops the current stage: a queued job never runs, a download loses
    /// this waiter (and stops if it was the last). A running job finishes.
    func cancel() {
        let stopped = current.withLock { current -> Current in
            defer { current = .cancelled }
            return current
        }
        switch stopped {
        case .job(let pool, let job): pool.cancel(job)
        case .download(let subscription): subscription.cancel()
        case .starting, .cancelled: break
        }
    }
}
