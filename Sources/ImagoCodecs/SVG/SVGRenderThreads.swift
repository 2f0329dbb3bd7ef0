import Dispatch
import Foundation
import Synchronization

/// Runs librsvg's renders on threads of their own, so that a caller waits
/// no longer than a time limit for one.
///
/// librsvg 2.54 has no way to stop a render once it has started. A render
/// past its time limit is therefore left to finish on its thread, its
/// result dropped, and counted as overdue until it does; while
/// `maximumOverdue` are running, new renders are refused at once. So the
/// limit bounds how long a caller waits and how many cores runaway renders
/// can take, not how long a runaway render itself runs (nor the memory it
/// holds meanwhile: its surface, within the pixel limit).
final class SVGRenderThreads: Sendable {
    /// The renders of every ``SVGDecoder`` in the process.
    static let shared = SVGRenderThreads()

    /// What became of a render.
    enum Outcome<Value: Sendable>: Sendable {
        case finished(Value)
        /// Past the time limit: still running, its result to be dropped.
        case overdue
        /// Not started: this many overdue renders were running.
        case refused(overdue: Int)
    }

    /// The stack of a render's thread: librsvg recurses into nested elements.
    static let stackSize = 16 << 20

    private let overdue = Atomic<Int>(0)

    init() {}

    /// Renders past their time limit that are still running.
    var overdueCount: Int { overdue.load(ordering: .relaxed) }

    /// Runs `body` on a thread of its own and waits for it up to
    /// `timeLimit`; `onFinish` is called on that thread once `body` has
    /// returned and the overdue count is settled (for tests).
    func run<Value: Sendable>(
        timeLimit: Duration, maximumOverdue: Int, onFinish: (@Sendable () -> Void)? = nil, _ body: @escaping @Sendable () -> Value
    ) -> Outcome<Value> {
        let running = overdue.load(ordering: .relaxed)
        guard running < maximumOverdue else { return .refused(overdue: running) }
        let job = Job<Value>()
        let thread = Thread { [self] in
            let value = body()
            if job.finish(value) { overdue.subtract(1, ordering: .relaxed) }
            job.done.signal()
            onFinish?()
        }
        thread.stackSize = Self.stackSize
        thread.start()
        if job.done.wait(timeout: .now() + Self.nanoseconds(timeLimit)) == .success, let value = job.value {
            return .finished(value)
        }
        // Counted before it is marked, so that the thread, which uncounts
        // it only once it sees the mark, never takes the count below zero.
        overdue.add(1, ordering: .relaxed)
        if let value = job.abandon() {
            overdue.subtract(1, ordering: .relaxed)
            return .finished(value)
        }
        return .overdue
    }

    /// `duration` in whole nanoseconds, at most a day.
    private static func nanoseconds(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        guard seconds < 86_400 else { return .seconds(86_400) }
        return .nanoseconds(Int(max(0, seconds)) * 1_000_000_000 + Int(max(0, attoseconds) / 1_000_000_000))
    }

    /// One render: its result, whether its caller has stopped waiting,
    /// and the signal that it is done.
    private final class Job<Value: Sendable>: Sendable {
        private struct State {
            var value: Value?
            var isAbandoned = false
        }

        private let state = Mutex(State())
        let done = DispatchSemaphore(value: 0)

        var value: Value? { state.withLock { $0.value } }

        /// Keeps `value`; whether the caller had stopped waiting for it.
        func finish(_ value: Value) -> Bool {
            state.withLock { state in
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
