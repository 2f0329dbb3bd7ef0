import Foundation
import ImagoSandbox
import Testing

@testable import Imago

@Suite("Scheduling: suspend, resume, cancel all, priorities, concurrency limits", .timeLimit(.minutes(10)))
struct SchedulingTests {
    let loader = MockDataLoader()
    let decoder = MockImageDecoder()

    func url(_ id: Int) -> URL { URL(string: "https://images.example/photo\(id)")! }

    @Test("suspended downloads wait; resuming starts them")
    func suspendResume() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        pipeline.suspendDownloads()
        #expect(pipeline.areDownloadsSuspended)
        let tasks = (1...5).map { pipeline.imageTask(for: ImageRequest(url: url($0))) }
        await waitUntilQueued(5, in: pipeline)
        #expect(loader.totalCallCount == 0)

        pipeline.resumeDownloads()
        for (index, task) in tasks.enumerated() {
            #expect(MockImage.id(of: try await task.response.image) == UInt32(index + 1))
        }
        #expect(loader.totalCallCount == 5)
    }

    @Test("cancelAll ends every task with a cancellation, running or queued")
    func cancelAll() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, downloads: 2)
        loader.pause()
        let tasks = (1...6).map { pipeline.imageTask(for: ImageRequest(url: url($0))) }
        await loader.waitForStarts(2)

        pipeline.cancelAll()

        for task in tasks {
            let result = await task.result
            guard case .failure(let error) = result, error.isCancellation else {
                Issue.record("expected a cancellation, got \(result)")
                continue
            }
        }
        #expect(pipeline.activeTaskCount == 0)
        loader.resume()
        #expect(loader.totalCallCount == 2)
    }

    @Test("queued downloads start highest priority first, and a priority change reorders them")
    func priorities() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, downloads: 1)
        loader.pause()
        let blocker = pipeline.imageTask(for: ImageRequest(url: url(0)))
        await loader.waitForStarts(1)

        let low = pipeline.imageTask(for: ImageRequest(url: url(1), priority: .low))
        let normal = pipeline.imageTask(for: ImageRequest(url: url(2), priority: .normal))
        let high = pipeline.imageTask(for: ImageRequest(url: url(3), priority: .high))
        let raised = pipeline.imageTask(for: ImageRequest(url: url(4), priority: .veryLow))
        await waitUntilQueued(4, in: pipeline)
        raised.priority = .veryHigh
        #expect(raised.priority == .veryHigh)

        loader.resume()
        for task in [blocker, low, normal, high, raised] { _ = try await task.response }
        #expect(loader.startOrder == [url(0), url(4), url(3), url(2), url(1)])
    }

    @Test("queued decodes run highest priority first, a priority change reorders them, and a cancelled one never runs")
    func decodePriorities() async throws {
        // Given one decode thread, held by a decode
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, decodes: 1)
        decoder.pause()
        let blocker = pipeline.imageTask(for: ImageRequest(url: url(10)))
        while decoder.decodeOrder.isEmpty { await Task.yield() }

        // When downloaded images of mixed priority queue for decoding
        let low = pipeline.imageTask(for: ImageRequest(url: url(11), priority: .low))
        let normal = pipeline.imageTask(for: ImageRequest(url: url(12), priority: .normal))
        let high = pipeline.imageTask(for: ImageRequest(url: url(13), priority: .high))
        let raised = pipeline.imageTask(for: ImageRequest(url: url(14), priority: .veryLow))
        let cancelled = pipeline.imageTask(for: ImageRequest(url: url(15), priority: .veryHigh))
        while pipeline.decodeThreads.queuedCount < 5 { await Task.yield() }
        raised.priority = .veryHigh
        cancelled.cancel()
        #expect(pipeline.decodeThreads.queuedCount == 4, "the cancelled decode left the queue")

        // Then they decode by priority, the raised one first, the cancelled one never
        decoder.resume()
        for task in [blocker, low, normal, high, raised] { _ = try await task.response }
        #expect(decoder.decodeOrder == [10, 14, 13, 12, 11])
        await #expect(throws: ImagePipeline.Error.self) { try await cancelled.response }
    }

    @Test("a disk hit queued behind a busy decode thread and then cancelled is never read or decoded")
    func cancelledDiskHit() async throws {
        // Given a disk cache holding an image, and the only decode thread held by a download's decode
        let folder = TemporaryDirectory()
        let disk = try DiskCache(path: folder.path)
        try disk.storeData(MockImage.data(id: 21), forKey: url(21).absoluteString)
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, dataCache: disk, decodes: 1)
        decoder.pause()
        let blocker = pipeline.imageTask(for: ImageRequest(url: url(20)))
        while decoder.decodeOrder.isEmpty { await Task.yield() }

        // When the disk hit queues and is cancelled
        let hit = pipeline.imageTask(for: ImageRequest(url: url(21)))
        #expect(pipeline.decodeThreads.queuedCount == 1, "the disk read waits for the decode thread")
        hit.cancel()

        // Then its job left the queue: the entry was never decoded, nothing was downloaded for it, and it is still stored
        #expect(pipeline.decodeThreads.queuedCount == 0)
        decoder.resume()
        _ = try await blocker.response
        await #expect(throws: ImagePipeline.Error.self) { try await hit.response }
        #expect(decoder.decodeOrder == [20])
        #expect(loader.callCount(url(21)) == 0)
        #expect(disk.containsData(forKey: url(21).absoluteString))
        #expect(pipeline.statistics.diskHits == 0)
    }

    @Test("shared work runs at its most urgent waiter's priority")
    func sharedPriority() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, downloads: 1)
        loader.pause()
        let blocker = pipeline.imageTask(for: ImageRequest(url: url(0)))
        await loader.waitForStarts(1)

        let other = pipeline.imageTask(for: ImageRequest(url: url(1), priority: .normal))
        let shared = pipeline.imageTask(for: ImageRequest(url: url(2), priority: .low))
        await waitUntilQueued(2, in: pipeline)
        // A second, urgent waiter on url(2) lifts the shared download above url(1)
        let urgent = pipeline.imageTask(for: ImageRequest(url: url(2), priority: .veryHigh))

        loader.resume()
        for task in [blocker, other, shared, urgent] { _ = try await task.response }
        #expect(loader.startOrder == [url(0), url(2), url(1)])
    }

    @Test("the per-host limit caps downloads to one host while another host proceeds")
    func perHostLimit() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, downloads: 8, perHost: 2)
        loader.pause()
        let slowHost = (1...6).map { pipeline.imageTask(for: ImageRequest(url: url($0))) }
        await loader.waitForStarts(2)
        let otherHost = pipeline.imageTask(for: ImageRequest(url: URL(string: "https://other.example/x9")!))
        await loader.waitForStarts(3)
        #expect(loader.startOrder.filter { $0.host == "images.example" }.count == 2)
        loader.resume()
        for task in slowHost + [otherHost] { _ = try await task.response }
        #expect(loader.maximumRunning <= 3)
    }

    /// Waits until `count` downloads sit in the download queue.
    private func waitUntilQueued(_ count: Int, in pipeline: ImagePipeline) async {
        while pipeline.downloadLimiter.counts.queued < count { await Task.yield() }
    }
}
