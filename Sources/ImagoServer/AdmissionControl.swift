import Foundation
import Imago

/// At most `limit` transformations run at once and at most `queueCapacity`
/// wait for a turn: beyond that a request is refused at once (429 with
/// Retry-After), and one that waits past `queueTimeout` is refused then
/// (503). Waiters are served first come, first served.
final class AdmissionControl: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var running = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    let limit: Int
    let queueCapacity: Int
    let queueTimeout: Duration
    private let state = Locked(State())

    init(limit: Int, queueCapacity: Int, queueTimeout: Duration) {
        self.limit = max(1, limit)
        self.queueCapacity = max(0, queueCapacity)
        self.queueTimeout = queueTimeout
    }

    /// Requests waiting for a turn now.
    var queueLength: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` when a turn is free; throws the 429 or 503 when none comes.
    func run<Result>(_ body: () async throws(ServiceError) -> Result) async throws(ServiceError) -> Result {
        try await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async throws(ServiceError) {
        enum Decision { case run, full, wait(UInt64) }
        let decision = state.withLock { state -> Decision in
            if state.running < limit {
                state.running += 1
                return .run
            }
            guard state.waiters.count < queueCapacity else { return .full }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch decision {
        case .run:
            return
        case .full:
            throw ServiceError(status: 429, message: "too many requests: \(limit) transformations running and \(queueCapacity) waiting", headers: [("Retry-After", "1")])
        case .wait(let id):
            let admitted = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    state.withLock { $0.waiters.append(Waiter(id: id, continuation: continuation)) }
                    Task { [queueTimeout] in
                        try? await Task.sleep(for: queueTimeout)
                        self.refuse(id)
                    }
                }
            } onCancel: {
                refuse(id)
            }
            guard admitted else {
                throw ServiceError(status: 503, message: "no transformation slot within \(queueTimeout); try again later", headers: [("Retry-After", "1")])
            }
        }
    }

    /// Hands the turn to the first waiter, or frees it.
    private func release() {
        let next = state.withLock { state -> Waiter? in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.running -= 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }

    /// Takes `id` out of the queue, if it is still there, and tells it no.
    private func refuse(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }
}
