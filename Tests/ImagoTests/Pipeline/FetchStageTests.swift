import Dispatch
import Foundation
import ImagoConcurrency
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("FetchStage: cancel and priority reach the live stage only")
struct FetchStageTests {
    let images = ImageFetches()
    let data = DataFetches()
    let pool = PriorityThreadPool(threads: 1, name: "imago-stage-test")

    /// Occupies the pool's only thread until the returned semaphore is signalled.
    func holdPool() -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        pool.submit(priority: .veryHigh) {
            started.signal()
            gate.wait()
        }
        started.wait()
        return gate
    }

    /// Releases the pool and returns once every job queued now has run.
    func drain(_ gate: DispatchSemaphore) async {
        gate.signal()
        await pool.run(priority: .veryLow) {}
    }

    /// Starts an image fetch whose work is a bare stage; returns the waiter's subscription and the stage.
    func startFetch() throws -> (ImageFetches.Subscription, FetchStage) {
        let made = Locked<FetchStage?>(nil)
        let key = ImageFetchKey(image: ImageCacheKey("photo"), networkPolicy: .useCache)
        let subscription = images.subscribe(key: key, priority: .normal, observer: .init(completion: { _ in })) { context, _ in
            let stage = FetchStage(context: context)
            made.withLock { $0 = stage }
            return { stage.cancel() }
        }
        return (subscription, try #require(made.withLock { $0 }))
    }

    @Test("a priority change after each stage transition reaches only the live stage")
    func priorityFollowsTheLiveStage() async throws {
        let (waiter, stage) = try startFetch()

        // Given a queued disk job: it follows the fetch's priority
        var gate = holdPool()
        stage.submit(to: pool) {}
        guard case .queued(_, let diskJob) = stage.current else { throw StageError.unexpected(stage.current) }
        waiter.setPriority(.high)
        #expect(pool.priority(of: diskJob) == .high)

        // When the job has run and the fetch downloads, the download follows it
        await drain(gate)
        guard case .running = stage.current else { throw StageError.unexpected(stage.current) }
        let dataWork = Locked<DataFetches.Context?>(nil)
        let download = stage.joinDownload { priority in
            data.subscribe(
                key: DataFetchKey(dataKey: "photo", isReload: false, headers: [:]), priority: priority, observer: .init(completion: { _ in })
            ) {
                context, _ in
                dataWork.withLock { $0 = context }
                return {}
            }
        }
        #expect(download != nil)
        let downloadContext = try #require(dataWork.withLock { $0 })
        #expect(downloadContext.priority == .high, "the download starts at the fetch's priority")
        waiter.setPriority(.veryHigh)
        #expect(downloadContext.priority == .veryHigh)

        // When the fetch moves on to a queued decode job, only the job follows
        gate = holdPool()
        stage.submit(to: pool) {}
        guard case .queued(_, let decodeJob) = stage.current else { throw StageError.unexpected(stage.current) }
        #expect(pool.priority(of: decodeJob) == .veryHigh)
        waiter.setPriority(.low)
        #expect(pool.priority(of: decodeJob) == .low)
        #expect(downloadContext.priority == .veryHigh, "the download stage it left is not re-prioritised")

        // When the fetch is done, nothing is re-prioritised or cancelled
        stage.finish()
        waiter.setPriority(.veryLow)
        #expect(pool.priority(of: decodeJob) == .low)
        await drain(gate)
        download?.cancel()
    }

    @Test("cancelling a queued job's fetch takes the job out of the queue; it never runs")
    func cancelQueuedJob() async throws {
        let (waiter, stage) = try startFetch()
        let gate = holdPool()
        let ran = Locked(false)
        stage.submit(to: pool) { ran.withLock { $0 = true } }
        guard case .queued(_, let job) = stage.current else { throw StageError.unexpected(stage.current) }

        waiter.cancel()

        #expect(pool.priority(of: job) == nil)
        guard case .cancelled = stage.current else { throw StageError.unexpected(stage.current) }
        stage.submit(to: pool) { ran.withLock { $0 = true } }
        let download = stage.joinDownload { priority in
            Issue.record("a cancelled fetch must not download")
            return data.subscribe(
                key: DataFetchKey(dataKey: "photo", isReload: false, headers: [:]), priority: priority, observer: .init(completion: { _ in })
            ) {
                _, _ in {}
            }
        }
        #expect(download == nil)
        await drain(gate)
        #expect(!ran.withLock { $0 })
    }
}

private enum StageError: Error {
    case unexpected(FetchStage.Current)
}
