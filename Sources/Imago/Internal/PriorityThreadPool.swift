#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

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
final class PriorityThreadPool: Sendable {
    typealias Priority = ImageRequest.Priority
    typealias Job = UInt64

    private let queue: JobQueue

    /// Starts `threads` threads named `name`0, `name`1, ...
    init(threads: Int, name: String) {
        queue = JobQueue()
        for index in 0..<max(1, threads) {
            let threadName = "\(name)\(index)"
            let thread = Thread { [queue] in
                // Set from the thread itself, so that it reaches the kernel (for profilers and debuggers).
                Thread.current.name = threadName
                queue.runJobs()
            }
            thread.start()
        }
    }

    deinit {
        // Jobs capture their owner, so none is pending when the owner (and
        // with it this pool) goes away: the threads only need to end.
        queue.shutDown()
    }

    /// Queues `body` to run on one of the threads.
    @discardableResult
    func submit(priority: Priority, _ body: @escaping @Sendable () -> Void) -> Job {
        queue.submit(priority: priority, body)
    }

    /// Moves a queued job to another priority, behind the jobs already there
    /// (a job that returns to a level it left takes back its old place).
    func setPriority(_ priority: Priority, for job: Job) {
        queue.setPriority(priority, for: job)
    }

    /// Takes a job out of the queue: `true` if it had not started (it never
    /// will), `false` if it has started or finished.
    @discardableResult
    func cancel(_ job: Job) -> Bool {
        queue.cancel(job)
    }

    /// The number of jobs waiting for a thread.
    var queuedCount: Int { queue.queuedCount }

    /// The priority of a queued job; `nil` once it has started or was cancelled.
    func priority(of job: Job) -> Priority? { queue.priority(of: job) }

    /// Runs `body` on one of the threads at `priority` and returns its result.
    func run<T: Sendable>(priority: Priority = .normal, _ body: @escaping @Sendable () -> T) async -> T {
        await withUnsafeContinuation { continuation in
            submit(priority: priority) { continuation.resume(returning: body()) }
        }
    }
}

/// The pool's shared state: its own mutex and condition variable, since the
/// threads sleep on it (``Locked`` has no condition).
private final class JobQueue: @unchecked Sendable {
    // @unchecked: every stored property below `mutex` is only touched with it held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [PriorityThreadPool.Job: (priority: PriorityThreadPool.Priority, body: @Sendable () -> Void)] = [:]
    /// Job numbers by priority level, oldest first. A job that moved or was
    /// cancelled stays behind here and is skipped (checked against `jobs`).
    private var levels = [[PriorityThreadPool.Job]](repeating: [], count: PriorityThreadPool.Priority.allCases.count)
    private var heads = [Int](repeating: 0, count: PriorityThreadPool.Priority.allCases.count)
    private var nextJob: PriorityThreadPool.Job = 0
    private var idleThreads = 0
    private var isShutDown = false

    init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func submit(priority: PriorityThreadPool.Priority, _ body: @escaping @Sendable () -> Void) -> PriorityThreadPool.Job {
        pthread_mutex_lock(mutex)
        let job = nextJob
        nextJob += 1
        jobs[job] = (priority, body)
        levels[priority.rawValue].append(job)
        // Wake a thread only if one sleeps: busy threads take the job when they finish theirs.
        let wakes = idleThreads > 0
        pthread_mutex_unlock(mutex)
        if wakes { pthread_cond_signal(condition) }
        return job
    }

    func setPriority(_ priority: PriorityThreadPool.Priority, for job: PriorityThreadPool.Job) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard let queued = jobs[job], queued.priority != priority else { return }
        jobs[job] = (priority, queued.body)
        levels[priority.rawValue].append(job)
    }

    func cancel(_ job: PriorityThreadPool.Job) -> Bool {
        pthread_mutex_lock(mutex)
        let removed = jobs.removeValue(forKey: job)
        pthread_mutex_unlock(mutex)
        return removed != nil
    }

    func priority(of job: PriorityThreadPool.Job) -> PriorityThreadPool.Priority? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return jobs[job]?.priority
    }

    var queuedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return jobs.count
    }

    func shutDown() {
        pthread_mutex_lock(mutex)
        isShutDown = true
        pthread_mutex_unlock(mutex)
        pthread_cond_broadcast(condition)
    }

    /// A thread's loop: runs jobs until the pool shuts down.
    func runJobs() {
        pthread_mutex_lock(mutex)
        while true {
            if let body = takeNext() {
                pthread_mutex_unlock(mutex)
                body()
                pthread_mutex_lock(mutex)
            } else if isShutDown {
                break
            } else {
                idleThreads += 1
                pthread_cond_wait(condition, mutex)
                idleThreads -= 1
            }
        }
        pthread_mutex_unlock(mutex)
    }

    /// The highest-priority queued job, removed from the queue. Called with the mutex held.
    private func takeNext() -> (@Sendable () -> Void)? {
        for level in levels.indices.reversed() {
            while heads[level] < levels[level].count {
                let job = levels[level][heads[level]]
                heads[level] += 1
                if heads[level] == levels[level].count {
                    levels[level].removeAll(keepingCapacity: true)
                    heads[level] = 0
                }
                // A job that moved to another level (or was cancelled) is skipped here.
                if let queued = jobs[job], queued.priority.rawValue == level {
                    jobs[job] = nil
                    return queued.body
                }
            }
        }
        return nil
    }
}
