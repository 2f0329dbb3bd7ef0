import Dispatch
import Foundation
import Testing

@testable import ImagoCodecs

@Suite("SVGRenderThreads: a caller waits no longer than the limit; overdue renders are counted until they end, and bound new ones")
struct SVGRenderThreadsTests {
    @Test("a render within its limit gives its value, on a thread of its own")
    func finished() {
        let threads = SVGRenderThreads()
        let caller = pthread_self()
        guard case .finished(let onOwnThread) = threads.run(timeLimit: .seconds(60), maximumOverdue: 1, { pthread_self() != caller }) else {
            Issue.record("not finished")
            return
        }
        #expect(onOwnThread)
        #expect(threads.overdueCount == 0)
    }

    @Test("a render past its limit is overdue until it ends; meanwhile the maximum refuses new ones")
    func overdue() {
        // Given a render that runs until the test lets it end
        let threads = SVGRenderThreads()
        let release = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let blocked: @Sendable () -> Int = {
            release.wait()
            return 1
        }
        let first = threads.run(timeLimit: .milliseconds(10), maximumOverdue: 1, onFinish: { ended.signal() }, blocked)

        // Then the caller stopped waiting, and the render is counted
        guard case .overdue = first else {
            Issue.record("expected overdue, got \(first)")
            return
        }
        #expect(threads.overdueCount == 1)
        guard case .refused(let overdue) = threads.run(timeLimit: .seconds(60), maximumOverdue: 1, { 2 }) else {
            Issue.record("a render started past the maximum")
            return
        }
        #expect(overdue == 1)

        // When it ends, it is no longer counted, and renders start again
        release.signal()
        ended.wait()
        #expect(threads.overdueCount == 0)
        guard case .finished(let value) = threads.run(timeLimit: .seconds(60), maximumOverdue: 1, { 3 }) else {
            Issue.record("not finished")
            return
        }
        #expect(value == 3)
    }
}
