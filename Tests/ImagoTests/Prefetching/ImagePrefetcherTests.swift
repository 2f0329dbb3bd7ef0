import Foundation
import Testing

@testable import Imago

@Suite("ImagePrefetcher: warm the caches at low priority, stop on demand", .timeLimit(.minutes(10)))
struct ImagePrefetcherTests {
    let loader = MockDataLoader()

    func request(_ id: Int) -> ImageRequest { ImageRequest(url: URL(string: "https://images.example/next\(id)")!) }

    @Test("prefetched images end up in memory; images already there are not loaded again")
    func warmsMemory() async throws {
        let pipeline = ImagePipeline.mock(loader: loader)
        _ = try await pipeline.image(for: request(1))
        let prefetcher = ImagePrefetcher(pipeline: pipeline)

        prefetcher.startPrefetching(with: (1...5).map(request))
        prefetcher.startPrefetching(with: (1...5).map(request))  // a repeat starts nothing new
        while prefetcher.pendingCount > 0 { await Task.yield() }

        #expect(pipeline.statistics.memoryHits == 0, "the prefetcher's checks of memory are not hits")
        for id in 1...5 { #expect(pipeline.cachedImage(for: request(id)) != nil) }
        #expect(loader.totalCallCount == 5)
    }

    @Test("stopping cancels queued prefetches without touching a real request for the same image")
    func stopping() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, downloads: 1)
        loader.pause()
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        prefetcher.startPrefetching(with: [request(1)])
        await loader.waitForStarts(1)
        prefetcher.startPrefetching(with: (2...4).map(request))
        while pipeline.downloadLimiter.counts.queued < 3 { await Task.yield() }
        let real = pipeline.imageTask(for: request(1))

        prefetcher.stopAll()
        #expect(prefetcher.pendingCount == 0)
        loader.resume()

        #expect(MockImage.id(of: try await real.response.image) == 1)
        #expect(loader.totalCallCount == 1)  // the queued prefetches of 2-4 never started
    }

    @Test("prefetches run behind real requests")
    func lowPriority() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, downloads: 1)
        loader.pause()
        let blocker = pipeline.imageTask(for: request(0))
        await loader.waitForStarts(1)
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        prefetcher.startPrefetching(with: [request(1), request(2)])
        let real = pipeline.imageTask(for: request(3))
        while pipeline.downloadLimiter.counts.queued < 3 { await Task.yield() }

        loader.resume()
        _ = try await (blocker.response, real.response)
        while prefetcher.pendingCount > 0 { await Task.yield() }
        // The real request goes first; the two prefetches reach the queue in either order.
        let order = loader.startOrder.map { MockImage.id(from: $0) }
        #expect(order.prefix(2) == [0, 3])
        #expect(Set(order.dropFirst(2)) == [1, 2])
    }
}
