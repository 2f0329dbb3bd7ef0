import Foundation
import ImagoConcurrency
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("ImagePipeline: lookup order, sources, cache policies, errors")
struct ImagePipelineTests {
    let loader = MockDataLoader()
    let decoder = MockImageDecoder()
    let folder = TemporaryDirectory()

    func url(_ id: Int) -> URL { URL(string: "https://images.example/photo\(id)")! }

    @Test("memory, then disk, then network, each telling where the image came from")
    func lookupOrder() async throws {
        // Given a pipeline with a disk cache
        let disk = try DiskCache(path: folder.path)
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, dataCache: disk)

        // When the same URL is loaded three times
        let first = try await pipeline.image(for: url(7))
        let second = try await pipeline.image(for: url(7))

        // Then the first comes from the network, the second from memory
        #expect(first.source == .network)
        #expect(MockImage.id(of: first.image) == 7)
        #expect(second.source == .memory)
        #expect(loader.callCount(url(7)) == 1)
        #expect(disk.containsData(forKey: url(7).absoluteString))

        // When memory is cleared, the disk serves it without a download
        pipeline.cache.removeAllImages()
        let third = try await pipeline.image(for: url(7))
        #expect(third.source == .disk)
        #expect(MockImage.id(of: third.image) == 7)
        #expect(loader.callCount(url(7)) == 1)
        #expect(third.timings.diskRead != nil && third.timings.decode != nil)

        let statistics = pipeline.statistics
        #expect(statistics.memoryHits == 1 && statistics.diskHits == 1 && statistics.networkLoads == 1)
    }

    @Test("a memory hit is returned synchronously by cachedImage and loadImage")
    func synchronousMemoryHit() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        let request = ImageRequest(url: url(3))
        #expect(pipeline.cachedImage(for: request) == nil)
        guard case .inProgress(let task) = pipeline.loadImage(request) else {
            Issue.record("a cold request must start a task")
            return
        }
        _ = try await task.response

        guard case .cached(let response) = pipeline.loadImage(request) else {
            Issue.record("a loaded image must be a memory hit")
            return
        }
        #expect(MockImage.id(of: response.image) == 3)
        #expect(response.source == .memory)
        #expect(pipeline.cachedImage(for: request) != nil)
    }

    @Test(
        "cache policies choose the tiers read and written",
        arguments: [
            (ImageRequest.CachePolicy.default, true, true),
            (.memoryOnly, true, false),
            (.diskOnly, false, true),
            (.none, false, false),
        ])
    func cachePolicies(policy: ImageRequest.CachePolicy, inMemory: Bool, onDisk: Bool) async throws {
        let disk = try DiskCache(path: folder.path)
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, dataCache: disk)
        let request = ImageRequest(url: url(5), cachePolicy: policy)

        _ = try await pipeline.image(for: request)

        #expect((pipeline.cache[request] != nil) == inMemory)
        #expect(disk.containsData(forKey: request.cacheKey) == onDisk)
        // Reading: with nothing readable the next load downloads again
        _ = try await pipeline.image(for: request)
        #expect(loader.callCount(url(5)) == (inMemory || onDisk ? 1 : 2))
    }

    @Test("a server error names its status and URL and caches nothing")
    func httpStatus() async throws {
        let disk = try DiskCache(path: folder.path)
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, dataCache: disk)
        loader.setReply(.init(data: Data(), failure: .httpStatus(404)), for: url(1))

        let result = await pipeline.imageTask(for: ImageRequest(url: url(1))).result

        guard case .failure(.httpStatus(let code, let failedURL)) = result else {
            Issue.record("expected httpStatus, got \(result)")
            return
        }
        #expect(code == 404 && failedURL == url(1))
        #expect(disk.count == 0)
        #expect(pipeline.statistics.failedTasks == 1)
    }

    @Test("garbage data is a decoding error naming the URL, and is not kept on disk")
    func garbage() async throws {
        let disk = try DiskCache(path: folder.path)
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, dataCache: disk)
        loader.setReply(.init(data: Data("<html>oops</html>".utf8)), for: url(2))

        let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: url(2)) }

        guard case .decodingFailed(let key, _) = error else {
            Issue.record("expected decodingFailed, got \(String(describing: error))")
            return
        }
        #expect(key == url(2).absoluteString)
        #expect(error?.description.contains(url(2).absoluteString) == true)
        // Bytes that do not decode are not kept on disk
        #expect(!disk.containsData(forKey: url(2).absoluteString))

        // Bytes stored under the key by other means are removed once they fail to decode
        try disk.storeData(Data("garbage".utf8), metadata: Data(), forKey: url(3).absoluteString)
        let second = await pipeline.imageTask(for: ImageRequest(url: url(3))).result
        #expect(throws: ImagePipeline.Error.self) { try second.get() }
        #expect(!disk.containsData(forKey: url(3).absoluteString))
        #expect(loader.callCount(url(3)) == 0)
    }

    @Test("a data provider supplies bytes for a key; its errors name the key")
    func dataProvider() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        let request = ImageRequest(key: "signed/42") { MockImage.data(id: 42) }
        let response = try await pipeline.image(for: request)
        #expect(MockImage.id(of: response.image) == 42)
        #expect(pipeline.cache.cachedImage(forKey: ImageCacheKey("signed/42")) != nil)

        struct Denied: Error {}
        let failing = ImageRequest(key: "signed/43") { throw Denied() }
        let result = await pipeline.imageTask(for: failing).result
        guard case .failure(.dataProviderFailed(let key, _)) = result else {
            Issue.record("expected dataProviderFailed, got \(result)")
            return
        }
        #expect(key == "signed/43")
    }

    @Test("explicit cache access: store and read by key in memory and on disk, remove, clear")
    func explicitCache() async throws {
        let disk = try DiskCache(path: folder.path)
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder, dataCache: disk)
        let cache = pipeline.cache
        let image = try #require(MockImage.image(id: 9))

        cache.storeImage(image, forKey: ImageCacheKey("k"))
        try await cache.storeData(MockImage.data(id: 10), forKey: "https://images.example/photo10")
        #expect(cache.cachedImage(forKey: ImageCacheKey("k")) == image)
        #expect(await cache.cachedData(forKey: "https://images.example/photo10") == MockImage.data(id: 10))

        // Data stored by key is what a request for that key decodes, with no download
        let response = try await pipeline.image(for: url(10))
        #expect(response.source == .disk && loader.totalCallCount == 0)

        await cache.remove(ImageRequest(url: url(10)))
        #expect(await cache.cachedData(forKey: url(10).absoluteString) == nil)
        try await cache.removeAll()
        #expect(cache.cachedImage(forKey: ImageCacheKey("k")) == nil)
    }

    @Test("cache keys keep the query unless told which items to drop")
    func cacheKeys() {
        let signed = URL(string: "https://cdn.example/a.jpg?w=200&token=abc&h=100")!
        #expect(ImageRequest(url: signed).cacheKey == signed.absoluteString)
        let key = ImageRequest.cacheKey(for: signed, removingQueryItems: ["token"])
        #expect(key == "https://cdn.example/a.jpg?w=200&h=100")
        let request = ImageRequest(url: signed, cacheKey: key)
        #expect(request.cacheKey == key)
        #expect(ImageRequest(url: signed, targetSize: ImageSize(width: 10, height: 10)).imageKey != ImageRequest(url: signed).imageKey)
    }

    @Test("progress reaches the task's stream and the stream ends with the task")
    func progress() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        let task = pipeline.imageTask(for: ImageRequest(url: url(8)))
        var last: DownloadProgress?
        for await progress in task.progress { last = progress }
        #expect(last == DownloadProgress(completed: 8, expected: 8))
        _ = try await task.response
    }

    @Test("statistics count memory evictions made by the cache's limits")
    func evictions() async throws {
        let pipeline = ImagePipeline(
            configuration: .init(
                dataLoader: loader, imageCache: MemoryCache<ImageCacheKey, Image>(configuration: .init(countLimit: 2, shardCount: 1)),
                decoders: [decoder]
            ))
        for id in 1...5 { _ = try await pipeline.image(for: url(id)) }
        #expect(pipeline.statistics.memoryEvictions == 3)
        #expect(pipeline.statistics.networkLoads == 5)
    }
}

@Suite("ImagePipeline: processors in the cache key, shared work, failures")
struct ImagePipelineProcessingTests {
    let loader = MockDataLoader()
    let url = URL(string: "https://images.example/photo5")!

    @Test("different processors share the download but are cached apart; identical ones share the processing")
    func keysAndCoalescing() async throws {
        let pipeline = ImagePipeline.mock(loader: loader)
        let plus1 = MockImageProcessor(amount: 1)
        let plus2 = MockImageProcessor(amount: 2)
        loader.pause()
        async let a = pipeline.image(for: ImageRequest(url: url, processors: [plus1]))
        async let b = pipeline.image(for: ImageRequest(url: url, processors: [plus1]))
        async let c = pipeline.image(for: ImageRequest(url: url, processors: [plus2]))
        async let plain = pipeline.image(for: ImageRequest(url: url))
        await loader.waitForStarts(1)
        loader.resume()
        let (first, second, third, original) = try await (a, b, c, plain)
        #expect(loader.callCount(url) == 1)
        #expect(plus1.callCount == 1, "the two identical requests waited on one piece of work")
        #expect(plus2.callCount == 1)
        #expect(first.image.pixels == original.image.pixels.map { $0 &+ 1 })
        #expect(second.image == first.image)
        #expect(third.image.pixels == original.image.pixels.map { $0 &+ 2 })
        #expect(try await pipeline.image(for: ImageRequest(url: url, processors: [plus2])).source == .memory)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, processors: [plus1]))?.pixels == first.image.pixels)
    }

    @Test("a failing processor is an error naming the URL and the processor; the data stays on disk")
    func failure() async throws {
        let folder = TemporaryDirectory()
        let disk = try DiskCache(path: folder.path)
        let pipeline = ImagePipeline.mock(loader: loader, dataCache: disk)
        let failing = MockImageProcessor(fails: true)
        let error = await #expect(throws: ImagePipeline.Error.self) {
            try await pipeline.image(for: ImageRequest(url: url, processors: [failing]))
        }
        #expect(error?.description == "processing \(url.absoluteString) with mock(1,fails) failed")
        #expect(error?.stage == "processing")
        #expect(disk.containsData(forKey: url.absoluteString))
        #expect(try await pipeline.image(for: ImageRequest(url: url)).source == .disk)
    }
}

@Suite("ImagePipeline: what the disk tier keeps, original data or processed images")
struct DiskStorageTests {
    let folder = TemporaryDirectory()
    let loads = Locked(0)
    let jpeg = try! JPEGEncoder().encode(FormatFixtures.quadrants(width: 128, height: 96))

    func request(_ side: Int) -> ImageRequest {
        ImageRequest(key: "photo", targetSize: ImageSize(width: side, height: side)) { [loads, jpeg] in
            loads.withLock { $0 += 1 }
            return jpeg
        }
    }

    /// A new pipeline each time, with no memory cache, so every load reaches the disk tier.
    func pipeline(_ disk: DiskCache, _ storage: ImagePipeline.DiskStorage) -> ImagePipeline {
        ImagePipeline(configuration: .init(imageCache: nil, dataCache: disk, diskStorage: storage))
    }

    @Test("processed images only: the thumbnail is stored (WebP) and served, the original is not kept")
    func processedOnly() async throws {
        let disk = try DiskCache(path: folder.path)
        let first = try await pipeline(disk, .processedImages).image(for: request(32))
        #expect(first.image.size == ImageSize(width: 43, height: 32))
        let key = DiskKey.processedImage(request(32).imageKey)
        #expect(!disk.containsData(forKey: "photo"))
        #expect(disk.cachedData(forKey: key).map { ImageFormat(sniffing: $0.data) } == .webp)

        let second = try await pipeline(disk, .processedImages).image(for: request(32))
        #expect(second.source == .disk && second.image.size == first.image.size)
        #expect(FormatFixtures.showsQuadrants(second.image, tolerance: 24))
        #expect(loads.withLock { $0 } == 1)
        _ = try await pipeline(disk, .processedImages).image(for: request(64))
        #expect(loads.withLock { $0 } == 2, "another size needs the original again")
    }

    @Test("both: other sizes are made from the stored original; the default keeps the original only")
    func both() async throws {
        let disk = try DiskCache(path: folder.path)
        _ = try await pipeline(disk, .all).image(for: request(64))
        #expect(disk.containsData(forKey: "photo"))
        #expect(disk.containsData(forKey: DiskKey.processedImage(request(64).imageKey)))
        let other = try await pipeline(disk, .all).image(for: request(16))
        #expect(other.source == .disk && other.image.size == ImageSize(width: 21, height: 16))
        #expect(loads.withLock { $0 } == 1)

        _ = try await pipeline(disk, .originalData).image(for: request(48))
        #expect(!disk.containsData(forKey: DiskKey.processedImage(request(48).imageKey)))
    }
}
