import Foundation
import ImagoConcurrency
import Synchronization

/// Runs librsvg's renders on threads of their own, so that a caller waits
/// for one no longer than it takes to use up a limit of CPU time.
///
/// The limit counts the render thread's own CPU time, not the time on the
/// clock: a render on a machine busy with other work (or under a
/// sanitizer) gets its whole budget, however long that takes, and a
/// render that spins gets no more than its budget, however idle the
/// machine. librsvg does no I/O here (it reads from memory, with no base
/// URL), so a render is either computing or briefly waiting on a lock.
///
/// librsvg 2.54 has no way to stop a render once it has started. A render
/// past its limit is therefore left to finish on its thread, its result
/// dropped, and counted as overdue until it does; while `maximumOverdue`
/// are running, new renders are refused at once. So the limit bounds what
/// a caller waits for and how many cores runaway renders can take, not
/// how long a runaway render itself runs (nor the memory it holds
/// meanwhile: its surface, within the pixel limit).
final class SVGRenderThreads: Sendable {
    /// The renders of every ``SVGDecoder`` in the process.
    static let shared = SVGRenderThreads()

    /// What became of a render.
    enum Outcome<Value: Sendable>: Sendable {
        case finished(Value)
        /// Past the CPU time limit: still running, its result to be dropped.
        case overdue
        /// Not started: this many overdue renders were running.
        case refused(overdue: Int)
    }

    /// The stack of a render's thread: librsvg recurses into nested elements.
    static let stackSize = 16 << 20

    /// The shortest wait between two readings of a render's CPU time.
    static let shortestWait = Duration.milliseconds(10)

    private let overdue = Atomic<Int>(0)

    init() {}

    /// Renders past their limit that are still running.
    var overdueCount: Int { overdue.load(ordering: .relaxed) }

    /// Runs `body` on a thread of its own and waits for it until it has
    /// returned or used up `cpuTimeLimit` of CPU time; `onFinish` is
    /// called on that thread once `body` has returned and the overdue
    /// count is settled (for tests).
    func run<Value: Sendable>(
        cpuTimeLimit: Duration, maximumOverdue: Int, onFinish: (@Sendable () -> Void)? = nil, _ body: @escaping @Sendable () -> Value
    ) -> Outcome<Value> {
        let running = overdue.load(ordering: .relaxed)
        guard running < maximumOverdue else { return .refused(overdue: running) }
        let job = Job<Value>()
        DedicatedThread.start(name: "imago-svg", stackSize: Self.stackSize) { [self] in
            job.start()
            if job.finish(body()) { overdue.subtract(1, ordering: .relaxed) }
            onFinish?()
        }
        // A thread's CPU time grows no faster than the clock, so the budget
        // cannot run out before the part of it still unused has passed.
        var unused = cpuTimeLimit
        while !job.waitForValue(timeout: max(unused, Self.shortestWait)) {
            guard let used = job.cpuTime() else { break }
            unused = cpuTimeLimit - used
            if unused <= .zero { break }
        }
        if let value = job.value { return .finished(value) }
        // Counted before it is marked, so that the thread, which uncounts
        // it only once it sees the mark, never takes the count below zero.
        overdue.add(1, ordering: .relaxed)
        if let value = job.abandon() {
            overdue.subtract(1, ordering: .relaxed)
            return .finished(value)
        }
        return .overdue
    }

    /// One render: its thread's CPU clock, its result, whether its caller
    /// has stopped waiting, and the signal that it is done.
    private final class Job<Value: Sendable>: Sendable {
        private struct State {
            var started = false
            var clock: clockid_t?
            var value: Value?
            var isAbandoned = false
        }

        private let state = Locked(State())

        var value: Value? { state.withLock { $0.value } }

        /// Waits up to `timeout` for the render to return: whether it has.
        func waitForValue(timeout: Duration) -> Bool {
            state.withLockWhenReady(timeout: timeout) { $0.value == nil ? nil : () } != nil
        }

        /// Notes the CPU clock of the calling thread, the render's.
        func start() {
            var clock = clockid_t()
            let found = pthread_getcpuclockid(pthread_self(), &clock) == 0
            state.withLock { state in
                state.started = true
                state.clock = found ? clock : nil
            }
        }

        /// The CPU time the render's thread has used: zero before it has
        /// started, ``unmeasured`` if its clock cannot be read (so the
        /// limit holds), nil once the render has returned. Read under the
        /// lock that `finish` takes, so the thread is still alive and its
        /// clock still its own.
        func cpuTime() -> Duration? {
            state.withLock { state in
                guard state.value == nil else { return nil }
                guard state.started else { return .zero }
                var time = timespec()
                guard let clock = state.clock, clock_gettime(clock, &time) == 0 else { return Job.unmeasured }
                return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
            }
        }

        /// The CPU time taken as used when it cannot be read: past any limit.
        static var unmeasured: Duration { .seconds(Int64(1) << 40) }

        /// Keeps `value`; whether the caller had stopped waiting for it.
        func finish(_ value: Value) -> Bool {
            defer { state.signalAll() }
            return state.withLock { state in
                state.value = value
                return state.isAbandoned
            }
        }

        /// Marks the job abandoned, unless it has finished: then its value.
        func abandon() -> Value? {
            state.withLock { state in
                if let value = state.value { return value }
                state.isAbandoned = true
                return nil
            }
        }
    }
}
