import Foundation
import Imago

/// A budget of bytes for decoded pixels in flight: a transformation
/// reserves what its source's header says the decode will hold, and waits
/// (first come, first served) until that fits. A reservation larger than
/// the whole budget is cut to the budget, so it runs alone rather than never.
final class DecodeBudget: Sendable {
    private struct State {
        var available: Int
        var waiters: [(bytes: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    let total: Int
    private let state: Locked<State>

    init(bytes: Int) {
        total = max(1, bytes)
        state = Locked(State(available: total))
    }

    /// Bytes reserved now.
    var reserved: Int { total - state.withLock { $0.available } }

    /// Runs `body` with `bytes` reserved.
    func withReservation<Result>(_ bytes: Int, _ body: () async throws(ServiceError) -> Result) async throws(ServiceError) -> Result {
        let charge = min(max(0, bytes), total)
        await reserve(charge)
        defer { release(charge) }
        return try await body()
    }

    private func reserve(_ bytes: Int) async {
        let granted = state.withLock { state in
            guard state.waiters.isEmpty, state.available >= bytes else { return false }
            state.available -= bytes
            return true
        }
        guard !granted else { return }
        await withCheckedContinuation { continuation in
            let grantedNow = state.withLock { state in
                if state.waiters.isEmpty, state.available >= bytes {
                    state.available -= bytes
                    return true
                }
                state.waiters.append((bytes, continuation))
                return false
            }
            if grantedNow { continuation.resume() }
        }
    }

    private func release(_ bytes: Int) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.available += bytes
            var woken: [CheckedContinuation<Void, Never>] = []
            while let first = state.waiters.first, first.bytes <= state.available {
                state.available -= first.bytes
                woken.append(first.continuation)
                state.waiters.removeFirst()
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }
}
