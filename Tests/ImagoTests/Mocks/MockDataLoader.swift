import Foundation
import ImagoConcurrency

@testable import Imago
@testable import ImagoCaching

/// A loader that serves mock images by URL, counts calls, can be paused and
/// released, records the order loads start in, and tells a test when a
/// number of loads has started (so tests wait for events, never sleep).
/// Its responses are fresh for an hour, so the disk tier serves them.
final class MockDataLoader: DataLoading {
    struct Reply: Sendable {
        var data: Data
        var delay: Duration?
        var failure: DataLoadingError.Code?
    }

    private struct State {
        var replies: [URL: Reply] = [:]
        var calls: [URL: Int] = [:]
        var startOrder: [URL] = []
        var isPaused = false
        var paused: [CheckedContinuation<Void, Never>] = []
        var running = 0
        var maximumRunning = 0
        var startWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// Serves `reply` for `url`; URLs without a reply get a mock image whose
    /// identifier is the number at the end of their path.
    func setReply(_ reply: Reply, for url: URL) {
        state.withLock { $0.replies[url] = reply }
    }

    /// Holds every load that starts from now on until ``resume()``.
    func pause() { state.withLock { $0.isPaused = true } }

    /// Releases the held loads.
    func resume() {
        let paused = state.withLock { state in
            state.isPaused = false
            defer { state.paused = [] }
            return state.paused
        }
        for continuation in paused { continuation.resume() }
    }

    func callCount(_ url: URL) -> Int { state.withLock { $0.calls[url, default: 0] } }
    var totalCallCount: Int { state.withLock { $0.calls.values.reduce(0, +) } }
    var startOrder: [URL] { state.withLock { $0.startOrder } }
    var maximumRunning: Int { state.withLock { $0.maximumRunning } }

    /// Returns once `count` loads have started in all.
    func waitForStarts(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state in
                guard state.startOrder.count < count else { return true }
                state.startWaiters.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    func loadData(
        for request: DataRequest,
        progress: @escaping @Sendable (DownloadProgress) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        let url = request.url
        let (reply, isPaused, reachedWaiters) = state.withLock { state in
            state.calls[url, default: 0] += 1
            state.startOrder.append(url)
            state.running += 1
            state.maximumRunning = max(state.maximumRunning, state.running)
            let reached = state.startWaiters.filter { $0.count <= state.startOrder.count }.map(\.continuation)
            state.startWaiters.removeAll { $0.count <= state.startOrder.count }
            return (state.replies[url], state.isPaused, reached)
        }
        defer { state.withLock { $0.running -= 1 } }
        for waiter in reachedWaiters { waiter.resume() }
        if isPaused {
            await withCheckedContinuation { continuation in
                let stillPaused = state.withLock { state in
                    if state.isPaused { state.paused.append(continuation) }
                    return state.isPaused
                }
                if !stillPaused { continuation.resume() }
            }
        }
        if let delay = reply?.delay {
            do { try await Task.sleep(for: delay) } catch { throw DataLoadingError(.cancelled, url: url) }
        }
        if Task.isCancelled { throw DataLoadingError(.cancelled, url: url) }
        if let failure = reply?.failure { throw DataLoadingError(failure, url: url) }
        let data = reply?.data ?? MockImage.data(id: MockImage.id(from: url))
        progress(DownloadProgress(completed: Int64(data.count), expected: Int64(data.count)))
        return DataLoadingResponse(data: data, headers: [.cacheControl: "max-age=3600"], url: url)
    }
}
