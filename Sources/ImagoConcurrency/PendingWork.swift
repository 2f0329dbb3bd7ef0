/// Counts work started and not yet finished, so that a task or a thread can
/// wait until none is left: the result cache's writes before a purge or a
/// close, the shared store's uploads before a test reads them back.
///
/// ```swift
/// writes.enter()
/// pool.submit(priority: .normal) { write(); writes.leave() }
/// await writes.idle()
/// ```
package final class PendingWork: Sendable {
    private struct State {
        var count = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    package init() {}

    /// Counts one more piece of work; pair it with one ``leave()``.
    package func enter() {
        state.withLock { $0.count += 1 }
    }

    /// Counts one piece of work done; wakes the waiters if it was the last.
    package func leave() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
            state.count -= 1
            guard state.count == 0 else { return nil }
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return }
        state.signalAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no work is pending (at once if none is).
    package func idle() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let isIdle = state.withLock { state in
                if state.count > 0 { state.waiters.append(waiter) }
                return state.count == 0
            }
            if isIdle { waiter.resume() }
        }
    }

    /// Blocks the calling thread until no work is pending: for the closing
    /// of a cache, never on Swift's cooperative pool.
    package func waitUntilIdle() {
        state.withLockWhenReady { $0.count == 0 ? () : nil }
    }
}
