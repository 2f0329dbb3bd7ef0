import Testing

@testable import ImagoConcurrency

@Suite("WeightedSemaphore: capacity, weights, keys, priorities, deadlines, suspension, cancellation")
struct WeightedSemaphoreTests {
    typealias Ticket = WeightedSemaphore.Ticket

    @Test("admits up to the capacity and then highest priority first, first come first within a priority")
    func priorityOrder() async {
        // Given a semaphore of one unit, taken
        let semaphore = WeightedSemaphore(capacity: 1)
        let first = semaphore.enqueue(priority: .normal)
        #expect(await semaphore.wait(first))

        // When tickets of mixed priority queue behind it
        let low = semaphore.enqueue(priority: .low)
        let high1 = semaphore.enqueue(priority: .high)
        let high2 = semaphore.enqueue(priority: .high)
        let veryHigh = semaphore.enqueue(priority: .veryHigh)
        #expect(semaphore.counts == (1, 4))

        // Then each release admits the next by priority, then arrival
        var order: [Ticket] = []
        var running = first
        for _ in 0..<4 {
            semaphore.release(running)
            running = [low, high1, high2, veryHigh].first { !order.contains($0) && semaphore.isRunning($0) }!
            order.append(running)
        }
        #expect(order == [veryHigh, high1, high2, low])
    }

    @Test("a priority change reorders queued work")
    func priorityChange() async {
        let semaphore = WeightedSemaphore(capacity: 1)
        let first = semaphore.enqueue(priority: .normal)
        let a = semaphore.enqueue(priority: .normal)
        let b = semaphore.enqueue(priority: .normal)

        semaphore.setPriority(.veryHigh, for: b)
        semaphore.release(first)
        #expect(semaphore.isRunning(b) && !semaphore.isRunning(a))

        // Moving back and forth leaves one place, not two
        semaphore.setPriority(.low, for: a)
        semaphore.setPriority(.normal, for: a)
        semaphore.release(b)
        #expect(semaphore.isRunning(a))
        semaphore.release(a)
        #expect(semaphore.counts == (0, 0))
    }

    @Test("the per-key capacity holds while other keys go ahead")
    func perKeyCapacity() {
        let semaphore = WeightedSemaphore(capacity: 4, perKeyCapacity: 2)
        let a = (0..<3).map { _ in semaphore.enqueue(key: "a", priority: .normal) }
        let b = semaphore.enqueue(key: "b", priority: .low)
        #expect(semaphore.isRunning(a[0]) && semaphore.isRunning(a[1]))
        #expect(!semaphore.isRunning(a[2]))
        #expect(semaphore.isRunning(b), "a full key lets a lower priority of another key go ahead")
        semaphore.release(a[0])
        #expect(semaphore.isRunning(a[2]))
    }

    @Test("weights: admitted while they fit; one that does not fit holds the queue; one above the capacity runs alone")
    func weights() {
        // Given 10 units, 6 of them taken
        let semaphore = WeightedSemaphore(capacity: 10)
        let six = semaphore.enqueue(weight: 6)
        #expect(semaphore.isRunning(six) && semaphore.counts == (6, 0))

        // When 6 more ask, then 1: the 6 does not fit, and the 1 behind it waits too (no starving the large one)
        let second = semaphore.enqueue(weight: 6)
        let small = semaphore.enqueue(weight: 1)
        #expect(!semaphore.isRunning(second) && !semaphore.isRunning(small))

        // Then the release admits both, in order
        semaphore.release(six)
        #expect(semaphore.isRunning(second) && semaphore.isRunning(small))
        #expect(semaphore.counts == (7, 0))

        // And a weight larger than the capacity waits for all of it, then takes all of it
        let huge = semaphore.enqueue(weight: 1_000)
        #expect(!semaphore.isRunning(huge))
        semaphore.release(second)
        #expect(!semaphore.isRunning(huge), "1 unit is still taken")
        semaphore.release(small)
        #expect(semaphore.isRunning(huge) && semaphore.counts == (10, 0))
        semaphore.release(huge)
        #expect(semaphore.counts == (0, 0))
    }

    @Test("suspension holds queued work; resuming admits it")
    func suspension() async {
        let semaphore = WeightedSemaphore(capacity: 2)
        semaphore.suspend()
        let ticket = semaphore.enqueue(priority: .normal)
        #expect(!semaphore.isRunning(ticket))
        semaphore.resume()
        #expect(await semaphore.wait(ticket))
    }

    @Test("a queued ticket cancelled (directly or by its task) frees nothing and is skipped; a large one cancelled lets the small ones behind it in")
    func cancellation() async {
        let semaphore = WeightedSemaphore(capacity: 1)
        let first = semaphore.enqueue(priority: .normal)
        let cancelled = semaphore.enqueue(priority: .high)
        let waiting = Task { await semaphore.wait(cancelled) }
        waiting.cancel()
        #expect(await waiting.value == false)
        let direct = semaphore.enqueue(priority: .high)
        semaphore.cancel(direct)
        #expect(await semaphore.wait(direct) == false)

        let next = semaphore.enqueue(priority: .low)
        semaphore.release(first)
        #expect(await semaphore.wait(next))
        #expect(semaphore.counts == (1, 0))
        semaphore.release(next)

        // A large waiter holding the queue, cancelled by its task, lets a small one through.
        let weighted = WeightedSemaphore(capacity: 4)
        let three = weighted.enqueue(weight: 3)
        let large = Task { await weighted.acquire(weight: 4) }
        await waitUntil { weighted.counts == (3, 1) }
        let small = weighted.enqueue(weight: 1)
        #expect(!weighted.isRunning(small), "1 unit is free, but the large waiter holds the queue")
        large.cancel()
        #expect(await large.value == nil)
        #expect(await weighted.wait(small))
        weighted.release(three)
        weighted.release(small)
        #expect(weighted.counts == (0, 0))
    }

    @Test("deadlines: a waiter is refused at its own deadline, even behind one with a later deadline; the queue goes on")
    func deadlines() async {
        // Given one unit, taken, and a waiter with ten minutes to spare
        let semaphore = WeightedSemaphore(capacity: 1)
        let held = semaphore.enqueue()
        let patient = Task { await semaphore.acquire(deadline: .now + .seconds(600)) }
        await waitUntil { semaphore.counts.queued == 1 }

        // When a waiter with 50 ms comes next, it is refused while the first still waits
        #expect(await semaphore.acquire(deadline: .now + .milliseconds(50)) == nil)
        #expect(semaphore.counts == (1, 1))
        // A deadline already past is refused without waiting
        #expect(await semaphore.acquire(deadline: .now - .seconds(1)) == nil)

        // Then the released unit goes to the first waiter
        semaphore.release(held)
        let admitted = await patient.value
        #expect(admitted != nil)
        #expect(semaphore.counts == (1, 0))
    }

    /// Returns once `condition` holds: the waiters join from other tasks.
    private func waitUntil(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }
}
