/// Threads for blocking work (disk reads, decoding) that take queued jobs
/// highest priority first, first come first served within a priority.
///
/// The thread count is the concurrency limit, so a job needs no separate
/// admission step, and a job hands its result on itself (by calling back)
/// rather than resuming a waiting task: one thread hand-off per stage.
///
/// ```swift
/// let job = pool.submit(priority: .normal) { decodeAndDeliver() }
/// pool.setPriority(.veryHigh, for: job)   // scrolled into view
/// pool.cancel(job)                        // `true` if it had not started
/// ```
package final class PriorityThreadPool: Sendable {
    package typealias Priority = WorkPriority
    package typealias Job = UInt64

    private let queue: JobQueue

    /// Starts `threads` threads named `name`0, `name`1, ...
    package init(threads: Int, name: String) {
        queue = JobQueue()
        for index in 0..<max(1, threads) {
            DedicatedThread.start(name: "\(name)\(index)") { [queue] in queue.runJobs() }
        }
    }

    deinit {
        // Jobs capture their owner, so none is pending when the owner (and
        // with it this pool) goes away: the threads only need to end.
        queue.shutDown()
    }

    /// Queues `body` to run on one of the threads.
    @discardableResult
    package func submit(priority: Priority, _ body: @escaping @Sendable () -> Void) -> Job {
        queue.submit(priority: priority, body)
    }

    /// Moves a queued job to another priority, behind the jobs already there
    /// (a job that returns to a level it left takes back its old place).
    package func setPriority(_ priority: Priority, for job: Job) {
        queue.setPriority(priority, for: job)
    }

    /// Takes a job out of the queue: `true` if it had not started (it never
    /// will), `false` if it has started or finished.
    @discardableResult
    package func cancel(_ job: Job) -> Bool {
        queue.cancel(job)
    }

    /// The number of jobs waiting for a thread.
    package var queuedCount: Int { queue.queuedCount }

    /// The priority of a queued job; `nil` once it has started or was cancelled.
    package func priority(of job: Job) -> Priority? { queue.priority(of: job) }

    /// Runs `body` on one of the threads at `priority` and returns its result.
    package func run<T: Sendable>(priority: Priority = .normal, _ body: @escaping @Sendable () -> T) async -> T {
        await withUnsafeContinuation { continuation in
            submit(priority: priority) { continuation.resume(returning: body()) }
        }
    }
}

/// The pool's shared state: the queued jobs, behind one lock whose
/// condition the idle threads sleep on.
private final class JobQueue: Sendable {
    private struct State {
        var jobs: [PriorityThreadPool.Job: (priority: PriorityThreadPool.Priority, body: @Sendable () -> Void)] = [:]
        /// Places of queued jobs; `jobs` holds each one's current priority.
        var queue = PriorityQueue<PriorityThreadPool.Job>()
        var nextJob: PriorityThreadPool.Job = 0
        var isShutDown = false

        /// The highest-priority queued job, removed from the queue.
        mutating func takeNext() -> (@Sendable () -> Void)? {
            guard let job = queue.removeFirst(isQueued: { jobs[$0]?.priority == $1 }) else { return nil }
            return jobs.removeValue(forKey: job)?.body
        }
    }

    private let state = Locked(State())

    func submit(priority: PriorityThreadPool.Priority, _ body: @escaping @Sendable () -> Void) -> PriorityThreadPool.Job {
        let job = state.withLock { state in
            let job = state.nextJob
            state.nextJob += 1
            state.jobs[job] = (priority, body)
            state.queue.append(job, at: priority)
            return job
        }
        // Cheap when no thread sleeps: busy threads take the job when they finish theirs.
        state.signalOne()
        return job
    }

    func setPriority(_ priority: PriorityThreadPool.Priority, for job: PriorityThreadPool.Job) {
        state.withLock { state in
            guard let queued = state.jobs[job], queued.priority != priority else { return }
            state.jobs[job] = (priority, queued.body)
            state.queue.append(job, at: priority)
        }
    }

    func cancel(_ job: PriorityThreadPool.Job) -> Bool {
        state.withLock { $0.jobs.removeValue(forKey: job) } != nil
    }

    func priority(of job: PriorityThreadPool.Job) -> PriorityThreadPool.Priority? {
        state.withLock { $0.jobs[job]?.priority }
    }

    var queuedCount: Int { state.withLock { $0.jobs.count } }

    func shutDown() {
        state.withLock { $0.isShutDown = true }
        state.signalAll()
    }

    /// A thread's loop: runs jobs until the pool shuts down (queued jobs first).
    func runJobs() {
        while let body = state.withLockWhenReady({ state -> (@Sendable () -> Void)?? in
            if let body = state.takeNext() { return .some(body) }
            return state.isShutDown ? .some(nil) : nil
        }) {
            body()
        }
    }
}
