import Foundation
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import Imago

@Suite("render: bytes the caller holds, decoded as a request asks, finished on the decode thread")
struct RenderTests {
    let url = URL(string: "https://example.com/photo.jpg")!

    /// A pipeline with both caches and a loader that must never be called.
    func makePipeline(_ folder: TemporaryDirectory) throws -> (ImagePipeline, MockDataLoader, DiskCache, MemoryCache<ImageCacheKey, Image>) {
        let loader = MockDataLoader()
        let memory = MemoryCache<ImageCacheKey, Image>()
        let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
        let configuration = ImagePipeline.Configuration(dataLoader: loader, imageCache: memory, dataCache: disk, diskStorage: [.originalData, .processedImages])
        return (ImagePipeline(configuration: configuration), loader, disk, memory)
    }

    @Test("scaled to the target size, processors applied, finish run on a decode thread; no cache read or written, nothing loaded")
    func rendersWithoutCaches() async throws {
        // Given a 400x300 JPEG and a request for a 100x100 fit with a processor
        let folder = TemporaryDirectory()
        let (pipeline, loader, disk, memory) = try makePipeline(folder)
        defer { disk.close() }
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants(width: 400, height: 300))
        let processor = MockImageProcessor()
        let request = ImageRequest(url: url, targetSize: ImageSize(width: 100, height: 100), contentMode: .fit, processors: [processor])

        // When it is rendered
        let (size, thread) = try await pipeline.render(jpeg, as: request) { image in
            (ImageSize(width: image.width, height: image.height), Thread.current.name ?? "")
        }

        // Then the image fits the box, went through the processor, and was finished on a decode thread
        #expect(size == ImageSize(width: 100, height: 75))
        #expect(processor.callCount == 1)
        #expect(thread.hasPrefix("imago-decode"), "\(thread)")
        // And no tier was touched, nothing was loaded
        #expect(memory.totalCount == 0)
        #expect(disk.count == 0)
        #expect(loader.totalCallCount == 0)
    }

    @Test("bytes that do not decode and a processor that fails are typed errors naming the request's URL")
    func typedErrors() async throws {
        let folder = TemporaryDirectory()
        let (pipeline, _, disk, _) = try makePipeline(folder)
        defer { disk.close() }
        await #expect {
            try await pipeline.render(Data("not an image".utf8), as: ImageRequest(url: url)) { _ in true }
        } throws: { error in
            guard case .decodingFailed(let key, _) = error as? ImagePipeline.Error else { return false }
            return key == url.absoluteString
        }
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants())
        let failing = ImageRequest(url: url, processors: [MockImageProcessor(fails: true)])
        await #expect {
            try await pipeline.render(jpeg, as: failing) { _ in true }
        } throws: { error in
            guard case .processingFailed(let key, let processor) = error as? ImagePipeline.Error else { return false }
            return key == url.absoluteString && processor == MockImageProcessor(fails: true).identifier
        }
    }
}
