import NIOPosix

/// Threads for blocking work (disk I/O, decoding), so that it never occupies
/// Swift's cooperative pool, whose few threads must stay free for async code.
final class BlockingPool: Sendable {
    private let pool: NIOThreadPool

    /// Starts `threads` threads named `name`.
    init(threads: Int, name: String) {
        pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool._start(threadNamePrefix: name)
    }

    deinit {
        // Work items capture their owner, so none is pending when the owner
        // (and with it this pool) goes away.
        pool.shutdownGracefully { _ in }
    }

    /// Runs `body` on one of the pool's threads and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            // A work item handed over while the pool shuts down is reported
            // as cancelled; it still runs so that the caller always resumes.
            pool.submit { _ in continuation.resume(returning: body()) }
        }
    }
}
