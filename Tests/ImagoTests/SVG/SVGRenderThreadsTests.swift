import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ImagoCodecs

@Suite("SVGRenderThreads: a caller waits no longer than the render's CPU time limit; overdue renders are counted until they end, and bound new ones")
struct SVGRenderThreadsTests {
    @Test("a render within its limit gives its value, on a thread of its own")
    func finished() {
        let threads = SVGRenderThreads()
        let caller = pthread_self()
        guard case .finished(let onOwnThread) = threads.run(cpuTimeLimit: .seconds(60), maximumOverdue: 1, { pthread_self() != caller }) else {
            Issue.record("not finished")
            return
        }
        #expect(onOwnThread)
        #expect(threads.overdueCount == 0)
    }

    @Test("time spent waiting, not computing, does not count: a render that sleeps past its limit still gives its value")
    func waitingIsFree() {
        let threads = SVGRenderThreads()
        let outcome = threads.run(cpuTimeLimit: .milliseconds(20), maximumOverdue: 1) { () -> Int in
            Thread.sleep(forTimeInterval: 0.3)
            return 1
        }
        guard case .finished(let value) = outcome else {
            Issue.record("expected finished, got \(outcome)")
            return
        }
        #expect(value == 1)
    }

    @Test("a render past its limit is overdue until it ends; meanwhile the maximum refuses new ones")
    func overdue() {
        // Given a render that computes until the test lets it end
        let threads = SVGRenderThreads()
        let release = Atomic<Bool>(false)
        let ended = DispatchSemaphore(value: 0)
        let spinning: @Sendable () -> Int = {
            var turns = 0
            while !release.load(ordering: .relaxed) { turns &+= 1 }
            return 1
        }
        let first = threads.run(cpuTimeLimit: .milliseconds(10), maximumOverdue: 1, onFinish: { ended.signal() }, spinning)

        // Then the caller stopped waiting, and the render is counted
        guard case .overdue = first else {
            Issue.record("expected overdue, got \(first)")
            return
        }
        #expect(threads.overdueCount == 1)
        guard case .refused(let overdue) = threads.run(cpuTimeLimit: .seconds(60), maximumOverdue: 1, { 2 }) else {
            Issue.record("a render started past the maximum")
            return
        }
        #expect(overdue == 1)

        // When it ends, it is no longer counted, and renders start again
        release.store(true, ordering: .relaxed)
        ended.wait()
        #expect(threads.overdueCount == 0)
        guard case .finished(let value) = threads.run(cpuTimeLimit: .seconds(60), maximumOverdue: 1, { 3 }) else {
            Issue.record("not finished")
            return
        }
        #expect(value == 3)
    }
}
