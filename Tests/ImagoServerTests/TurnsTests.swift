import Foundation
import Testing

@testable import ImagoServer

@Suite("Turns: the admission control's semaphore")
struct TurnsTests {
    /// Returns once `turns` has `count` waiters.
    func waitForWaiters(_ turns: Turns, _ count: Int) async {
        while turns.waitingCount < count { await Task.yield() }
    }

    @Test("first come, first served; a waiter is refused at its own deadline even when it came after one with a later deadline")
    func deadlines() async {
        // Given one turn, taken, and a waiter with ten minutes to spare
        let turns = Turns(limit: 1)
        #expect(await turns.acquire(within: .seconds(1)))
        async let patient = turns.acquire(within: .seconds(600))
        await waitForWaiters(turns, 1)

        // When a waiter with 50 ms comes next, it is refused while the first still waits
        #expect(await turns.acquire(within: .milliseconds(50)) == false)
        #expect(turns.waitingCount == 1)

        // Then the released turn goes to the first waiter
        turns.release()
        #expect(await patient)
        #expect(turns.waitingCount == 0)
    }

    @Test("a cancelled waiter leaves the queue at once and takes no turn")
    func cancellation() async {
        let turns = Turns(limit: 1)
        #expect(await turns.acquire(within: .seconds(1)))
        let waiting = Task { await turns.acquire(within: .seconds(600)) }
        await waitForWaiters(turns, 1)
        waiting.cancel()
        #expect(await waiting.value == false)
        #expect(turns.waitingCount == 0)
        // The turn, released, is free again for the next one.
        turns.release()
        #expect(await turns.acquire(within: .zero))
    }
}
