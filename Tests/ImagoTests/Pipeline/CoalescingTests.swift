import Foundation
import Testing

@testable import Imago

@Suite("Coalescing: one download and one decode per key, waiters cancelled independently", .timeLimit(.minutes(10)))
struct CoalescingTests {
    let loader = MockDataLoader()
    let decoder = MockImageDecoder()
    let url = URL(string: "https://images.example/shared1")!

    @Test("1,000 concurrent requests for one URL make one download and one decode")
    func thousandWaiters() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        loader.pause()
        let tasks = (0..<1000).map { _ in pipeline.imageTask(for: ImageRequest(url: url)) }
        await loader.waitForStarts(1)
        loader.resume()

        for task in tasks {
            let response = try await task.response
            #expect(MockImage.id(of: response.image) == 1)
        }
        #expect(loader.callCount(url) == 1)
        #expect(decoder.decodeCount == 1)
        #expect(pipeline.statistics.coalescedRequests == 999)
    }

    @Test("cancelling some waiters leaves the shared download running for the rest")
    func mixedCancellation() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        loader.pause()
        let tasks = (0..<1000).map { _ in pipeline.imageTask(for: ImageRequest(url: url)) }
        await loader.waitForStarts(1)

        // When every third waiter cancels while the download is held
        var generator = SystemRandomNumberGenerator()
        let cancelled = Set(tasks.indices.filter { _ in Int.random(in: 0..<3, using: &generator) == 0 })
        for index in cancelled { tasks[index].cancel() }
        loader.resume()

        // Then the cancelled ones report cancellation, the rest the image, each exactly once
        for (index, task) in tasks.enumerated() {
            let result = await task.result
            if cancelled.contains(index) {
                #expect(throws: ImagePipeline.Error.self) { try result.get() }
            } else {
                #expect(MockImage.id(of: try result.get().image) == 1)
            }
        }
        #expect(loader.callCount(url) == 1)
        #expect(pipeline.statistics.completedTasks == 1000)
        #expect(pipeline.statistics.cancelledTasks == cancelled.count)
    }

    @Test("the work is cancelled when its last waiter leaves, and a new request starts it again")
    func lastWaiterCancels() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        loader.pause()
        let tasks = (0..<3).map { _ in pipeline.imageTask(for: ImageRequest(url: url)) }
        await loader.waitForStarts(1)
        for task in tasks { task.cancel() }
        #expect(pipeline.imageFetches.count == 0)
        #expect(pipeline.dataFetches.count == 0)

        loader.resume()
        let response = try await pipeline.image(for: url)
        #expect(MockImage.id(of: response.image) == 1)
        #expect(loader.callCount(url) == 2)
    }

    @Test("a waiter that joins late gets the same result")
    func lateJoiner() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        loader.pause()
        let early = pipeline.imageTask(for: ImageRequest(url: url))
        await loader.waitForStarts(1)
        let late = pipeline.imageTask(for: ImageRequest(url: url, priority: .veryHigh))
        loader.resume()
        #expect(try await early.response.image == late.response.image)
        #expect(loader.callCount(url) == 1)
    }

    @Test("different target sizes share the download but not the decode")
    func sizesShareDownload() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        loader.pause()
        let small = pipeline.imageTask(for: ImageRequest(url: url, targetSize: ImageSize(width: 64, height: 64)))
        let large = pipeline.imageTask(for: ImageRequest(url: url, targetSize: ImageSize(width: 512, height: 512)))
        await loader.waitForStarts(1)
        loader.resume()
        _ = try await (small.response, large.response)
        #expect(loader.callCount(url) == 1)
        #expect(decoder.decodeCount == 2)
    }

    @Test("cancel and restart churn under a tight download limit: every restart succeeds, every task completes once")
    func churn() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, downloads: 2, perHost: 2)
        let urls = (0..<20).map { URL(string: "https://images.example/churn\($0)")! }
        for url in urls { loader.setReply(.init(data: MockImage.data(id: MockImage.id(from: url)), delay: .milliseconds(2)), for: url) }

        var generator = SystemRandomNumberGenerator()
        var survivors: [(URL, ImageTask)] = []
        for round in 0..<10 {
            let tasks = urls.map { ($0, pipeline.imageTask(for: ImageRequest(url: $0, cachePolicy: .none))) }
            for (_, task) in tasks where Int.random(in: 0..<2, using: &generator) == 0 { task.cancel() }
            if round == 9 { survivors = tasks.filter { !$0.1.isFinished } } else { await Task.yield() }
            for (_, task) in tasks where round < 9 { task.cancel() }
        }
        // The last round's surviving tasks all succeed with their own image
        for (url, task) in survivors {
            #expect(MockImage.id(of: try await task.response.image) == MockImage.id(from: url))
        }
        #expect(loader.maximumRunning <= 2)
        #expect(pipeline.activeTaskCount == 0)
        #expect(pipeline.statistics.completedTasks == 200)
    }
}
