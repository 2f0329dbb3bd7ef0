import Dispatch
import Foundation
import Testing

@testable import ImagoCaching
@testable import ImagoConcurrency

@Suite("PriorityThreadPool: priority order, priority changes, cancellation, the thread limit")
struct PriorityThreadPoolTests {
    /// A pool of one thread held by a job until `release()`, so that
    /// everything submitted meanwhile queues.
    private struct HeldPool {
        let pool = PriorityThreadPool(threads: 1, name: "imago-test")
        let gate = DispatchSemaphore(value: 0)
        let order = Locked<[String]>([])

        init() {
            let started = DispatchSemaphore(value: 0)
            pool.submit(priority: .veryHigh) { [gate] in
                started.signal()
                gate.wait()
            }
            started.wait()
        }

        @discardableResult
        func submit(_ name: String, _ priority: WorkPriority) -> PriorityThreadPool.Job {
            pool.submit(priority: priority) { [order] in order.withLock { $0.append(name) } }
        }

        /// Lets the held job end and waits until every queued job has run.
        func release() async -> [String] {
            gate.signal()
            await pool.run(priority: .veryLow) {}
            return order.withLock { $0 }
        }
    }

    @Test("queued jobs run highest priority first, first come first within a priority")
    func priorityOrder() async {
        // Given a pool whose only thread is busy
        let held = HeldPool()

        // When jobs of mixed priority queue
        held.submit("low", .low)
        held.submit("high 1", .high)
        held.submit("normal", .normal)
        held.submit("high 2", .high)
        held.submit("very high", .veryHigh)

        // Then they run by priority, then by arrival
        #expect(await held.release() == ["very high", "high 1", "high 2", "normal", "low"])
    }

    @Test("a priority change moves a queued job; a change back does not run it twice")
    func priorityChange() async {
        let held = HeldPool()
        let a = held.submit("a", .low)
        held.submit("b", .low)
        held.submit("c", .normal)
        let d = held.submit("d", .normal)

        held.pool.setPriority(.veryHigh, for: a)
        held.pool.setPriority(.veryLow, for: d)
        held.pool.setPriority(.normal, for: d)

        #expect(await held.release() == ["a", "c", "d", "b"])
    }

    @Test("a cancelled job never runs; cancelling a started or finished job says so")
    func cancellation() async {
        let held = HeldPool()
        held.submit("a", .normal)
        let b = held.submit("b", .normal)
        held.submit("c", .normal)

        #expect(held.pool.cancel(b))
        #expect(!held.pool.cancel(b), "already taken out")
        #expect(await held.release() == ["a", "c"])

        let finished = held.pool.submit(priority: .normal) {}
        await held.pool.run {}
        #expect(!held.pool.cancel(finished))
    }

    @Test("no more jobs run at once than the pool has threads, and every job runs once")
    func threadLimit() async {
        // Given a pool of 3 threads and 300 jobs that each hold a thread briefly
        let pool = PriorityThreadPool(threads: 3, name: "imago-test")
        let counts = Locked((running: 0, most: 0, runs: 0))
        let priorities = WorkPriority.allCases

        // When they are all submitted at once, at every priority
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<300 {
                group.addTask {
                    await pool.run(priority: priorities[index % priorities.count]) {
                        counts.withLock {
                            $0.running += 1
                            $0.most = max($0.most, $0.running)
                        }
                        usleep(100)
                        counts.withLock {
                            $0.running -= 1
                            $0.runs += 1
                        }
                    }
                }
            }
        }

        // Then at most 3 ran together (and more than one did), and each ran exactly once
        let final = counts.withLock { $0 }
        #expect((2...3).contains(final.most))
        #expect(final.runs == 300 && final.running == 0)
    }
}
