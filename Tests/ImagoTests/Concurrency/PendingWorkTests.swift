import Testing

@testable import ImagoConcurrency

@Suite("PendingWork and Locked's waits: waiters wake when the work is done, timed waits give up")
struct PendingWorkTests {
    @Test("idle() returns at once with nothing pending, and only after the last leave() otherwise")
    func idleAfterLastLeave() async {
        // Given two pieces of work pending
        let work = PendingWork()
        await work.idle()
        work.enter()
        work.enter()
        let woke = Locked(false)
        let waiter = Task {
            await work.idle()
            woke.withLock { $0 = true }
        }
        // When one ends, the waiter still waits; when the second ends, it wakes
        work.leave()
        let pool = PriorityThreadPool(threads: 1, name: "imago-test")
        await pool.run { work.leave() }
        await waiter.value
        // Then
        #expect(woke.withLock { $0 })
    }

    @Test("waitUntilIdle() blocks a thread until the work pending ends")
    func blockingWait() async {
        // Given work pending, and a thread that has begun waiting for it
        let work = PendingWork()
        work.enter()
        let threads = PriorityThreadPool(threads: 2, name: "imago-test")
        let order = Locked<[String]>([])
        let waited = Task {
            await threads.run {
                order.withLock { $0.append("waiting") }
                order.signalAll()
                work.waitUntilIdle()
                order.withLock { $0.append("waited") }
            }
        }
        await threads.run { order.withLockWhenReady { $0.isEmpty ? nil : () } }
        // When the work ends
        order.withLock { $0.append("left") }
        work.leave()
        await waited.value
        // Then the wait ended after it
        #expect(order.withLock { $0 } == ["waiting", "left", "waited"])
    }

    @Test("a timed wait returns nil once its time is up, and the value once a signal makes it ready")
    func timedWait() async {
        // Given a lock whose value is not ready
        let ready = Locked(false)
        // When nobody makes it ready, the wait gives up
        #expect(ready.withLockWhenReady(timeout: .milliseconds(20)) { $0 ? 1 : nil } == nil)
        // When another thread makes it ready, a wait far longer than needed returns at once with the value
        let pool = PriorityThreadPool(threads: 1, name: "imago-test")
        let waited = Task { await pool.run { ready.withLockWhenReady(timeout: .seconds(3600)) { $0 ? 2 : nil } } }
        ready.withLock { $0 = true }
        ready.signalAll()
        #expect(await waited.value == 2)
    }
}
