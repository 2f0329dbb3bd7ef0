import Foundation
import ImagoSandbox
import Testing

@testable import Imago

@Suite("data(for:): raw bytes through the same HTTP cache rules, coalescing and limits", .timeLimit(.minutes(10)))
struct DataRequestTests {
    let folder = TemporaryDirectory()
    let clock = ManualClock(epoch: Date())
    /// An SVG document: data requests store it as they store any bytes, undecoded.
    let document = VersionedImage { version in Data("<svg xmlns='http://www.w3.org/2000/svg' data-version='\(version)'/>".utf8) }

    func svg(_ version: Int) -> Data { document.makeBody(version) }

    /// Runs `body` with a server serving ``document`` at `/doc.svg` and a
    /// pipeline with a disk cache and the test's clock.
    func withScenario(_ body: (TestImageServer, ImagePipeline, DiskCache, URL) async throws -> Void) async throws {
        try await withTestServer(.init(readTimeout: .seconds(60))) { server, loader in
            server.setRoute("/doc.svg") { [document] in document.respond(to: $0) }
            let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
            defer { disk.close() }
            let configuration = ImagePipeline.Configuration(
                dataLoader: loader, imageCache: nil, dataCache: disk, currentDate: { [clock] in clock.date }
            )
            try await body(server, ImagePipeline(configuration: configuration), disk, server.url("/doc.svg"))
        }
    }

    func setHeaders(_ headers: HTTPFields) {
        document.state.withLock { $0.headers = headers }
    }

    @Test("a body that is no image is stored and served fresh from disk, with its Content-Type")
    func freshFromDisk() async throws {
        try await withScenario { server, pipeline, disk, url in
            setHeaders([.cacheControl: "max-age=60", .contentType: "image/svg+xml"])
            let first = try await pipeline.data(for: ImageRequest(url: url))
            #expect(first.source == .network && first.data == svg(1) && first.headers[.contentType] == "image/svg+xml")
            #expect(disk.containsData(forKey: url.absoluteString))

            clock.advance(by: .seconds(30))
            let second = try await pipeline.data(for: ImageRequest(url: url))
            #expect(second.source == .disk && second.data == svg(1) && !second.freshness.isStale)
            #expect(second.headers[.contentType] == "image/svg+xml")
            #expect(server.requestCount("/doc.svg") == 1)
        }
    }

    @Test("a stale entry is revalidated: the 304 serves the stored bytes; a changed document replaces them")
    func revalidated() async throws {
        try await withScenario { server, pipeline, _, url in
            setHeaders([.cacheControl: "max-age=60"])
            _ = try await pipeline.data(for: ImageRequest(url: url))
            clock.advance(by: .seconds(120))
            let confirmed = try await pipeline.data(for: ImageRequest(url: url))
            guard case .revalidated = confirmed.freshness else {
                Issue.record("\(confirmed.freshness)")
                return
            }
            #expect(confirmed.source == .disk && confirmed.data == svg(1))
            #expect(server.lastRequest("/doc.svg")?.headers[.ifNoneMatch] == "\"v1\"")

            document.state.withLock { $0.version = 2 }
            clock.advance(by: .seconds(120))
            let changed = try await pipeline.data(for: ImageRequest(url: url))
            #expect(changed.source == .network && changed.data == svg(2))
            clock.advance(by: .seconds(10))
            #expect(try await pipeline.data(for: ImageRequest(url: url)).data == svg(2), "the new version was stored")
            #expect(server.requestCount("/doc.svg") == 3)
        }
    }

    @Test("stale-if-error: a 503 serves the stored bytes at once, marked stale")
    func staleIfError() async throws {
        try await withScenario { server, pipeline, _, url in
            setHeaders([.cacheControl: "max-age=10, stale-if-error=600"])
            _ = try await pipeline.data(for: ImageRequest(url: url))
            document.state.withLock { $0.status = 503 }
            clock.advance(by: .seconds(60))
            let stale = try await pipeline.data(for: ImageRequest(url: url))
            guard case .stale(.networkFailed(.httpStatus(503, _))) = stale.freshness else {
                Issue.record("\(stale.freshness)")
                return
            }
            #expect(stale.data == svg(1) && server.requestCount("/doc.svg") == 2, "no retries while a stale copy can stand in")
        }
    }

    @Test("no-store is never written; stale-while-revalidate serves and refreshes in the background")
    func noStoreAndBackgroundRefresh() async throws {
        try await withScenario { server, pipeline, disk, url in
            setHeaders([.cacheControl: "no-store"])
            _ = try await pipeline.data(for: ImageRequest(url: url))
            #expect(!disk.containsData(forKey: url.absoluteString))
            #expect(try await pipeline.data(for: ImageRequest(url: url)).source == .network)

            setHeaders([.cacheControl: "max-age=10, stale-while-revalidate=600"])
            _ = try await pipeline.data(for: ImageRequest(url: url))
            document.state.withLock { $0.version = 2 }
            clock.advance(by: .seconds(60))
            let served = try await pipeline.data(for: ImageRequest(url: url))
            guard case .stale(.revalidatingInBackground) = served.freshness else {
                Issue.record("\(served.freshness)")
                return
            }
            #expect(served.data == svg(1))
            #expect(await pipeline.waitForBackgroundRefreshes(timeout: .seconds(600)))
            #expect(try await pipeline.data(for: ImageRequest(url: url)).data == svg(2))
        }
    }

    @Test("Vary: an entry stored for one Accept value answers another only once a 304 says it fits (RFC 9111 §4.1); then it is that request's")
    func vary() async throws {
        try await withScenario { server, pipeline, _, url in
            setHeaders([.cacheControl: "max-age=600", .vary: "Accept"])
            let json = ImageRequest(url: url, headers: [.accept: "application/json"])
            let xml = ImageRequest(url: url, headers: [.accept: "application/xml"])
            _ = try await pipeline.data(for: json)
            #expect(try await pipeline.data(for: json).source == .disk)
            let confirmed = try await pipeline.data(for: xml)
            guard case .revalidated = confirmed.freshness else {
                Issue.record("\(confirmed.freshness)")
                return
            }
            #expect(confirmed.source == .disk && confirmed.data == svg(1))
            #expect(server.lastRequest("/doc.svg")?.headers[.ifNoneMatch] == "\"v1\"")
            #expect(server.lastRequest("/doc.svg")?.headers[.accept] == "application/xml", "with the request's own fields")
            #expect(try await pipeline.data(for: xml).source == .disk, "now stored for this Accept")
            #expect(server.requestCount("/doc.svg") == 2)
        }
    }

    @Test("data and image requests for one URL share one download; a cancelled data request leaves the others")
    func coalescing() async throws {
        try await withTestServer { server, loader in
            let png = VersionedImage.body(version: 1)
            server.setRoute("/image.png", .init(headers: [.cacheControl: "max-age=60"], body: png))
            let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: nil))
            let url = server.url("/image.png")
            server.holdResponses()
            let first = Task { try await pipeline.data(for: ImageRequest(url: url)) }
            let second = Task { try await pipeline.data(for: ImageRequest(url: url)) }
            let image = pipeline.imageTask(for: ImageRequest(url: url))
            let cancelled = Task { try await pipeline.data(for: ImageRequest(url: url)) }
            // Every request has joined the one download once three of the four joined it.
            while pipeline.statistics.coalescedRequests < 3 { try await Task.sleep(for: .milliseconds(5)) }
            cancelled.cancel()
            await #expect(throws: ImagePipeline.Error.self) { try await cancelled.value }
            server.releaseResponses()
            #expect(try await first.value.data == png)
            #expect(try await second.value.data == png)
            #expect(try await image.response.image.width == 41)
            #expect(server.requestCount("/image.png") == 1)
        }
    }
}
