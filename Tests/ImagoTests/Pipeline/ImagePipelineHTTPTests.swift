import Foundation
import ImagoSandbox
import Testing

@testable import Imago

@Suite("ImagePipeline over real HTTP: coalescing, errors, decoding", .timeLimit(.minutes(10)))
struct ImagePipelineHTTPTests {
    let folder = TemporaryDirectory()

    func withPipeline(
        _ body: (TestImageServer, ImagePipeline, DiskCache) async throws -> Void
    ) async throws {
        try await withTestServer { server, loader in
            let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
            defer { disk.close() }
            try await body(server, ImagePipeline(configuration: .init(dataLoader: loader, dataCache: disk)), disk)
        }
    }

    static let photo: Data = {
        var canvas = Canvas(width: 640, height: 480, background: (10, 20, 30))
        canvas.fillCircle(centerX: 320, centerY: 240, radius: 100, color: (250, 200, 0))
        return (try? JPEGEncoder(quality: 85).encode(canvas.image!)) ?? Data()
    }()

    @Test("1,000 concurrent requests for one URL make exactly one HTTP request; cancelled waiters do not disturb the rest")
    func oneRequest() async throws {
        try await withPipeline { server, pipeline, _ in
            server.setRoute("/photo.jpg", .init(body: Self.photo))
            server.holdResponses()
            let url = server.url("/photo.jpg")
            let tasks = (0..<1000).map { _ in pipeline.imageTask(for: ImageRequest(url: url)) }
            await server.waitForRequests("/photo.jpg", count: 1)
            for task in tasks.enumerated().filter({ $0.offset % 4 == 0 }).map(\.element) { task.cancel() }
            server.releaseResponses()

            for (index, task) in tasks.enumerated() {
                let result = await task.result
                if index % 4 == 0 {
                    #expect((try? result.get()) == nil)
                } else {
                    let image = try result.get().image
                    #expect(image.width == 640 && image.height == 480)
                }
            }
            #expect(server.requestCount("/photo.jpg") == 1)
        }
    }

    @Test("a real JPEG is decoded small for a target size, stored on disk, then served from disk and memory")
    func decodeAndTiers() async throws {
        try await withPipeline { server, pipeline, disk in
            server.setRoute("/photo.jpg", .init(headers: [.cacheControl: "max-age=60"], body: Self.photo))
            let request = ImageRequest(url: server.url("/photo.jpg"), targetSize: ImageSize(width: 80, height: 80))
            let first = try await pipeline.image(for: request)
            #expect(first.source == .network)
            // Decoded at 1/4 (160x120, the smallest DCT factor covering 80x80), then resampled to fill 80x80.
            #expect(first.image.size == ImageSize(width: 107, height: 80))
            #expect(disk.cachedData(forKey: request.cacheKey)?.data == Self.photo)
            pipeline.cache.removeAllImages()
            #expect(try await pipeline.image(for: request).source == .disk)
            #expect(try await pipeline.image(for: request).source == .memory)
            #expect(server.requestCount("/photo.jpg") == 1)
        }
    }

    @Test("an HTML page served with status 200 is a decoding error that says so and names the URL, and is not cached")
    func htmlInsteadOfImage() async throws {
        try await withPipeline { server, pipeline, disk in
            server.setRoute("/page.jpg", .htmlErrorPage)
            let url = server.url("/page.jpg")
            let result = await pipeline.imageTask(for: ImageRequest(url: url)).result
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.description.contains("HTML, not an image"))
            #expect(error.description.contains(url.absoluteString))
            #expect(error.stage == "decoding")
            #expect(disk.cachedData(forKey: url.absoluteString) == nil)
        }
    }

    @Test("error statuses and failed downloads leave nothing in either cache")
    func failuresAreNotCached() async throws {
        try await withPipeline { server, pipeline, disk in
            server.setRoute("/missing.jpg", .init(status: 404, body: Self.photo))
            server.setRoute("/cut.jpg", .init(body: Self.photo, behaviour: .truncate(after: 500)))
            server.setRoute("/garbage.jpg", .garbage(count: 5_000))
            server.setRoute("/reset.jpg", .init(body: Self.photo, behaviour: .reset))
            for path in ["/missing.jpg", "/cut.jpg", "/garbage.jpg", "/reset.jpg"] {
                let request = ImageRequest(url: server.url(path))
                let result = await pipeline.imageTask(for: request).result
                #expect((try? result.get()) == nil, "\(path)")
                #expect(disk.cachedData(forKey: request.cacheKey) == nil)
                #expect(pipeline.cache[request] == nil)
            }
            guard case .failure(.httpStatus(404, _)) = await pipeline.imageTask(for: ImageRequest(url: server.url("/missing.jpg"))).result else {
                Issue.record("expected HTTP status 404")
                return
            }
        }
    }
}
