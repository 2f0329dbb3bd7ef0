import Testing

@testable import Imago

@Suite("WorkLimiter: limits, priorities, suspension, cancellation")
struct WorkLimiterTests {
    @Test("admits up to the limit and then highest priority first, first come first within a priority")
    func priorityOrder() async {
        // Given a limiter with one slot, taken
        let limiter = WorkLimiter(limit: 1)
        let first = limiter.enqueue(priority: .normal)
        #expect(await limiter.wait(first))

        // When tickets of mixed priority queue behind it
        let low = limiter.enqueue(priority: .low)
        let high1 = limiter.enqueue(priority: .high)
        let high2 = limiter.enqueue(priority: .high)
        let veryHigh = limiter.enqueue(priority: .veryHigh)
        #expect(limiter.counts == (1, 4))

        // Then each release admits the next by priority, then arrival
        var order: [WorkLimiter.Ticket] = []
        var running = first
        for _ in 0..<4 {
            limiter.release(running)
            running = [low, high1, high2, veryHigh].first { ticket in
                !order.contains(ticket) && isAdmitted(ticket, in: limiter)
            }!
            order.append(running)
        }
        #expect(order == [veryHigh, high1, high2, low])
    }

    @Test("a priority change reorders queued work")
    func priorityChange() async {
        let limiter = WorkLimiter(limit: 1)
        let first = limiter.enqueue(priority: .normal)
        let a = limiter.enqueue(priority: .normal)
        let b = limiter.enqueue(priority: .normal)

        limiter.setPriority(.veryHigh, for: b)
        limiter.release(first)
        #expect(isAdmitted(b, in: limiter) && !isAdmitted(a, in: limiter))

        // Moving back and forth leaves one place, not two
        limiter.setPriority(.low, for: a)
        limiter.setPriority(.normal, for: a)
        limiter.release(b)
        #expect(isAdmitted(a, in: limiter))
        limiter.release(a)
        #expect(limiter.counts == (0, 0))
    }

    @Test("the per-key limit holds while other keys go ahead")
    func perKeyLimit() {
        let limiter = WorkLimiter(limit: 4, perKeyLimit: 2)
        let a = (0..<3).map { _ in limiter.enqueue(key: "a", priority: .normal) }
        let b = limiter.enqueue(key: "b", priority: .low)
        #expect(isAdmitted(a[0], in: limiter) && isAdmitted(a[1], in: limiter))
        #expect(!isAdmitted(a[2], in: limiter))
        #expect(isAdmitted(b, in: limiter))
        limiter.release(a[0])
        #expect(isAdmitted(a[2], in: limiter))
    }

    @Test("suspension holds queued work; resuming admits it")
    func suspension() async {
        let limiter = WorkLimiter(limit: 2)
        limiter.suspend()
        let ticket = limiter.enqueue(priority: .normal)
        #expect(!isAdmitted(ticket, in: limiter))
        limiter.resume()
        #expect(await limiter.wait(ticket))
    }

    @Test("a queued ticket cancelled (directly or by its task) frees nothing and is skipped")
    func cancellation() async {
        let limiter = WorkLimiter(limit: 1)
        let first = limiter.enqueue(priority: .normal)
        let cancelled = limiter.enqueue(priority: .high)
        let waiting = Task { await limiter.wait(cancelled) }
        waiting.cancel()
        #expect(await waiting.value == false)
        let direct = limiter.enqueue(priority: .high)
        limiter.cancel(direct)
        #expect(await limiter.wait(direct) == false)

        let next = limiter.enqueue(priority: .low)
        limiter.release(first)
        #expect(await limiter.wait(next))
        #expect(limiter.counts == (1, 0))
    }

    /// Whether `ticket` holds a slot: only an admitted ticket's release changes the running count.
    private func isAdmitted(_ ticket: WorkLimiter.Ticket, in limiter: WorkLimiter) -> Bool {
        limiter.isRunning(ticket)
    }
}
