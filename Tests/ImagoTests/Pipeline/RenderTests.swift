import Foundation
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import Imago

@Suite("render: bytes the caller holds, decoded as a request asks, encoded on the decode thread")
struct RenderTests {
    let url = URL(string: "https://example.com/photo.jpg")!

    /// A pipeline with both caches and a loader that must never be called.
    func makePipeline(_ folder: TemporaryDirectory) throws -> (ImagePipeline, MockDataLoader, DiskCache, MemoryCache<ImageCacheKey, Image>) {
        let loader = MockDataLoader()
        let memory = MemoryCache<ImageCacheKey, Image>()
        let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
        let configuration = ImagePipeline.Configuration(
            dataLoader: loader, imageCache: memory, dataCache: disk, diskStorage: [.originalData, .processedImages])
        return (ImagePipeline(configuration: configuration), loader, disk, memory)
    }

    @Test("scaled to the target size, processors applied, encoded on a decode thread; no cache read or written, nothing loaded")
    func rendersWithoutCaches() async throws {
        // Given a 400x300 JPEG and a request for a 100x100 fit with a processor
        let folder = TemporaryDirectory()
        let (pipeline, loader, disk, memory) = try makePipeline(folder)
        defer { disk.close() }
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants(width: 400, height: 300))
        let processor = MockImageProcessor()
        let request = ImageRequest(url: url, targetSize: ImageSize(width: 100, height: 100), contentMode: .fit, processors: [processor])

        // When it is rendered, as an image and encoded
        let image = try await pipeline.render(jpeg, as: request)
        let encoder = MockImageEncoder()
        let encoded = try await pipeline.render(jpeg, as: request, encodedWith: encoder)

        // Then the image fits the box, went through the processor, and was encoded on a decode thread
        #expect(image.size == ImageSize(width: 100, height: 75))
        #expect(String(decoding: encoded, as: UTF8.self) == "100x75")
        #expect(processor.callCount == 2)
        let threads = encoder.encodingThreads
        #expect(threads.count == 1 && threads.allSatisfy { $0.hasPrefix("imago-decode") }, "\(threads)")
        // And no tier was touched, nothing was loaded
        #expect(memory.totalCount == 0)
        #expect(disk.count == 0)
        #expect(loader.totalCallCount == 0)
    }

    @Test("bytes that do not decode, a processor that fails and an encoder that fails are typed errors naming the request's URL")
    func typedErrors() async throws {
        let folder = TemporaryDirectory()
        let (pipeline, _, disk, _) = try makePipeline(folder)
        defer { disk.close() }
        await #expect {
            try await pipeline.render(Data("not an image".utf8), as: ImageRequest(url: url))
        } throws: { error in
            guard case .decodingFailed(let key, _) = error as? ImagePipeline.Error else { return false }
            return key == url.absoluteString
        }
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants())
        let failing = ImageRequest(url: url, processors: [MockImageProcessor(fails: true)])
        await #expect {
            try await pipeline.render(jpeg, as: failing, encodedWith: MockImageEncoder())
        } throws: { error in
            guard case .processingFailed(let key, let processor) = error as? ImagePipeline.Error else { return false }
            return key == url.absoluteString && processor == MockImageProcessor(fails: true).identifier
        }
        await #expect {
            try await pipeline.render(jpeg, as: ImageRequest(url: url), encodedWith: MockImageEncoder(fails: true))
        } throws: { error in
            guard case .encodingFailed(let key, let underlying) = error as? ImagePipeline.Error else { return false }
            return key == url.absoluteString && underlying.detail == "asked to fail"
        }
    }

    @Test("a request's page picks a frame of an animation as a still, or a TIFF's page; a page the source lacks is a typed error")
    func pages() async throws {
        // Given a 3-frame GIF of red, green and blue, a 2-page TIFF of two sizes, and a JPEG
        let folder = TemporaryDirectory()
        let (pipeline, _, disk, _) = try makePipeline(folder)
        defer { disk.close() }
        let colors: [[UInt8]] = [[220, 30, 30], [30, 200, 40], [30, 40, 210]]
        let frames = colors.map { color in Image(width: 40, height: 20, pixelFormat: .rgb8, pixels: (0..<800).flatMap { _ in color })! }
        let gif = try GIFEncoder().encode(frames: frames, durations: [0.1, 0.1, 0.1], loopCount: 0)
        let tiff = try FormatFixtures.tiff([
            FormatFixtures.TIFFPage(FormatFixtures.quadrants(width: 20, height: 10)), FormatFixtures.TIFFPage(frames[2]),
        ])
        let jpeg = try JPEGEncoder().encode(frames[0])
        func request(page: Int) -> ImageRequest {
            var request = ImageRequest(url: url, targetSize: ImageSize(width: 20, height: 10))
            request.page = page
            return request
        }

        // When pages are asked for, then each is a still of that frame or page, scaled to the target size
        for (page, color) in colors.enumerated() {
            let image = try await pipeline.render(gif, as: request(page: page))
            #expect(Array(image.pixels.prefix(3)) == color, "frame \(page)")
            #expect(image.size == ImageSize(width: 20, height: 10))
            #expect((image.animation == nil) == (page != 0), "page 0 is the animation from its first frame")
        }
        #expect(try await pipeline.render(tiff, as: request(page: 1)).pixels.prefix(3) == [30, 40, 210])
        // And a page past the last, or of a still image, is noSuchPage
        for (data, page, detail) in [
            (gif, 3, "the animation has 3 frames"), (jpeg, 1, "a still image has one page"), (tiff, 2, "the file has 2 pages"),
        ] {
            await #expect {
                try await pipeline.render(data, as: request(page: page))
            } throws: { error in
                guard case .decodingFailed(_, let underlying) = error as? ImagePipeline.Error else { return false }
                return underlying.code == .noSuchPage(page: page) && underlying.detail == detail
            }
        }
    }

    @Test(
        "the decode memory limit: a render waits until its header's pixels fit, an animated one too, and a cancelled one leaves the queue",
        .timeLimit(.minutes(1)))
    func decodeMemoryLimit() async throws {
        // Given a pipeline whose limit another holder has taken whole, and a 400x300 JPEG (480,000 bytes decoded)
        let limit = 1_000_000
        let pipeline = ImagePipeline(configuration: .init(dataLoader: MockDataLoader(), imageCache: nil, decodeMemoryLimit: limit))
        let memory = try #require(pipeline.decodeMemory)
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants(width: 400, height: 300))
        let held = try #require(await memory.acquire(weight: limit))

        // When a render and an animated render start, they wait in the queue
        let still = Task { try await pipeline.render(jpeg, as: ImageRequest(url: url)) }
        let animated = Task {
            try await pipeline.render(
                jpeg, as: ImageRequest(url: url), encodedWith: PNGEncoder(), animatingWith: WebPEncoder(), maximumFrameCount: 10)
        }
        while memory.counts.queued < 2 {
            try Task.checkCancellation()
            await Task.yield()
        }
        // And a third, cancelled while it waits, fails at once as cancelled
        let cancelled = Task { try await pipeline.render(jpeg, as: ImageRequest(url: url)) }
        while memory.counts.queued < 3 {
            try Task.checkCancellation()
            await Task.yield()
        }
        cancelled.cancel()
        await #expect {
            try await cancelled.value
        } throws: { error in
            guard case .cancelled = error as? ImagePipeline.Error else { return false }
            return true
        }
        #expect(memory.counts == (limit, 2), "the two renders still wait")

        // Then once the limit is given back, both run, each reserving what its header says, and give it all back
        memory.release(held)
        #expect(try await still.value.size == ImageSize(width: 400, height: 300))
        #expect(ImageFormat(sniffing: try await animated.value) == .png)
        #expect(memory.counts == (0, 0))
    }
}
