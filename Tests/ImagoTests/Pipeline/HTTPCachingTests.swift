import Foundation
import ImagoConcurrency
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

/// An image behind one URL that the test can change, served with the
/// test's caching headers, answering conditional requests the way an origin
/// server does.
final class VersionedImage: Sendable {
    struct State {
        var version = 1
        var headers: HTTPFields = [.cacheControl: "max-age=60"]
        var status: Int?
    }

    let state = Locked(State())
    /// The body of each version.
    let makeBody: @Sendable (Int) -> Data

    init(makeBody: @escaping @Sendable (Int) -> Data = VersionedImage.body) {
        self.makeBody = makeBody
    }

    /// A PNG whose width tells the versions apart (40 + version pixels).
    static func body(version: Int) -> Data {
        let canvas = Canvas(width: 40 + version, height: 30, background: (UInt8(version * 40), 90, 200))
        return (try? PNGEncoder().encode(canvas.image!)) ?? Data()
    }

    func etag(_ version: Int) -> String { "\"v\(version)\"" }

    func respond(to request: TestImageServer.Request) -> TestImageServer.Response {
        let (version, headers, status) = state.withLock { ($0.version, $0.headers, $0.status) }
        if let status { return .init(status: status) }
        var all = headers
        all.append(HTTPField(name: .eTag, value: etag(version)))
        if request.headers[.ifNoneMatch] == etag(version) {
            return .init(status: 304, headers: all)
        }
        return .init(headers: all, body: makeBody(version))
    }
}

@Suite("HTTP caching in the pipeline: freshness, revalidation, stale use, request policies", .timeLimit(.minutes(10)))
struct HTTPCachingTests {
    let folder = TemporaryDirectory()
    let clock = ManualClock(epoch: Date())
    let image = VersionedImage()

    /// Runs `body` with a server serving ``image`` at `/image.png` and a
    /// pipeline with a disk cache, no memory cache (so that every request
    /// reaches the disk tier) and the test's clock.
    func withScenario(
        policy: ImagePipeline.DiskCachePolicy = .http,
        servesStaleWhenOffline: Bool = true,
        diskStorage: ImagePipeline.DiskStorage = .originalData,
        _ body: (TestImageServer, ImagePipeline, DiskCache, URL) async throws -> Void
    ) async throws {
        try await withTestServer(.init(readTimeout: .seconds(60))) { server, loader in
            server.setRoute("/image.png") { [image] in image.respond(to: $0) }
            let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
            defer { disk.close() }
            let configuration = ImagePipeline.Configuration(
                dataLoader: loader, imageCache: nil, dataCache: disk, diskCachePolicy: policy, diskStorage: diskStorage,
                servesStaleWhenOffline: servesStaleWhenOffline, currentDate: { [clock] in clock.date }
            )
            try await body(server, ImagePipeline(configuration: configuration), disk, server.url("/image.png"))
        }
    }

    func setHeaders(_ headers: HTTPFields) {
        image.state.withLock { $0.headers = headers }
    }

    @Test("a fresh entry is served from disk without touching the network")
    func freshFromDisk() async throws {
        try await withScenario { server, pipeline, _, url in
            #expect(try await pipeline.image(for: url).source == .network)
            clock.advance(by: .seconds(50))
            let second = try await pipeline.image(for: url)
            #expect(second.source == .disk && !second.freshness.isStale)
            #expect(server.requestCount("/image.png") == 1)
        }
    }

    @Test("a stale entry is revalidated with If-None-Match; the 304 serves the stored body and refreshes its lifetime")
    func notModified() async throws {
        try await withScenario { server, pipeline, _, url in
            _ = try await pipeline.image(for: url)
            clock.advance(by: .seconds(120))
            let revalidated = try await pipeline.image(for: url)
            #expect(revalidated.source == .disk)
            guard case .revalidated = revalidated.freshness else {
                Issue.record("not revalidated: \(revalidated.freshness)")
                return
            }
            #expect(revalidated.image.width == 41)
            #expect(server.lastRequest("/image.png")?.headers[.ifNoneMatch] == "\"v1\"")
            #expect(server.requestCount("/image.png") == 2 && pipeline.statistics.revalidations == 1)

            clock.advance(by: .seconds(50))
            #expect(try await pipeline.image(for: url).source == .disk)
            #expect(server.requestCount("/image.png") == 2, "the 304 restarted the entry's lifetime")
        }
    }

    @Test("a processed image on disk is used while its original is fresh, then made again after the original is revalidated")
    func processedImagesAge() async throws {
        try await withScenario(diskStorage: .all) { server, pipeline, disk, url in
            let request = ImageRequest(url: url, targetSize: ImageSize(width: 20, height: 20), processors: [.grayscale])
            let first = try await pipeline.image(for: request)
            #expect(first.image.size == ImageSize(width: 27, height: 20) && first.image.pixelFormat == .gray8)
            let processedKey = DiskKey.processedImage(request.imageKey)
            let stored = try #require(disk.cachedData(forKey: processedKey))
            #expect(ImageFormat(sniffing: stored.data) == .webp)

            clock.advance(by: .seconds(50))
            let fromProcessed = try await pipeline.image(for: request)
            #expect(fromProcessed.source == .disk && fromProcessed.timings.decode != nil)
            #expect(fromProcessed.image.size == first.image.size)
            #expect(fromProcessed.dataCount == stored.data.count, "decoded from the processed entry, not the original")

            clock.advance(by: .seconds(70))
            let revalidated = try await pipeline.image(for: request)
            guard case .revalidated = revalidated.freshness else {
                Issue.record("stale processed image used: \(revalidated.freshness)")
                return
            }
            #expect(server.requestCount("/image.png") == 2)
            clock.advance(by: .seconds(50))
            #expect(try await pipeline.image(for: request).dataCount == disk.cachedData(forKey: processedKey)?.data.count)
            #expect(server.requestCount("/image.png") == 2, "the processed image was stored again with the refreshed lifetime")
        }
    }

    @Test("an image changed behind the same URL replaces the stale entry once the server answers 200")
    func changedImage() async throws {
        try await withScenario { server, pipeline, disk, url in
            #expect(try await pipeline.image(for: url).image.width == 41)
            image.state.withLock { $0.version = 2 }
            clock.advance(by: .seconds(30))
            #expect(try await pipeline.image(for: url).image.width == 41, "still fresh: the old image, no request")
            clock.advance(by: .seconds(60))
            let changed = try await pipeline.image(for: url)
            #expect(changed.source == .network && changed.image.width == 42)
            #expect(disk.cachedData(forKey: url.absoluteString)?.data == VersionedImage.body(version: 2))
            #expect(server.requestCount("/image.png") == 2)
        }
    }

    @Test("Last-Modified is sent back as If-Modified-Since, and heuristic freshness applies without max-age")
    func lastModified() async throws {
        try await withScenario { server, pipeline, _, url in
            let now = clock.date
            setHeaders([.date: HTTPDate.format(now), .lastModified: HTTPDate.format(now.addingTimeInterval(-10 * 3600))])
            _ = try await pipeline.image(for: url)
            clock.advance(by: .seconds(50 * 60))  // lifetime: 10% of 10 hours
            #expect(try await pipeline.image(for: url).source == .disk)
            #expect(server.requestCount("/image.png") == 1)
            clock.advance(by: .seconds(20 * 60))
            _ = try await pipeline.image(for: url)
            #expect(server.requestCount("/image.png") == 2)
            #expect(server.lastRequest("/image.png")?.headers[.ifModifiedSince] == HTTPDate.format(now.addingTimeInterval(-10 * 3600)))
        }
    }

    @Test("Expires counts from the server's Date, and an Age from an upstream cache shortens max-age")
    func expiresAndAge() async throws {
        try await withScenario { server, pipeline, _, url in
            let now = clock.date
            setHeaders([.date: HTTPDate.format(now), .expires: HTTPDate.format(now.addingTimeInterval(60))])
            _ = try await pipeline.image(for: url)
            clock.advance(by: .seconds(50))
            #expect(try await pipeline.image(for: url).source == .disk)
            #expect(server.requestCount("/image.png") == 1)
            clock.advance(by: .seconds(20))
            _ = try await pipeline.image(for: url)
            #expect(server.requestCount("/image.png") == 2)

            setHeaders([.cacheControl: "max-age=60", .age: "50"])
            _ = try await pipeline.image(for: ImageRequest(url: url, networkPolicy: .reload))
            clock.advance(by: .seconds(5))
            #expect(try await pipeline.image(for: url).source == .disk)
            clock.advance(by: .seconds(10))
            _ = try await pipeline.image(for: url)
            #expect(server.requestCount("/image.png") == 4, "50 s old on arrival: stale 10 s later")
        }
    }

    @Test("no-store is never written; no-cache is stored but revalidated every time")
    func noStoreNoCache() async throws {
        try await withScenario { server, pipeline, disk, url in
            setHeaders([.cacheControl: "no-store"])
            _ = try await pipeline.image(for: url)
            #expect(!disk.containsData(forKey: url.absoluteString))
            #expect(try await pipeline.image(for: url).source == .network)

            setHeaders([.cacheControl: "max-age=600, no-cache"])
            _ = try await pipeline.image(for: url)
            #expect(disk.containsData(forKey: url.absoluteString))
            let next = try await pipeline.image(for: url)
            guard case .revalidated = next.freshness else {
                Issue.record("not revalidated")
                return
            }
            #expect(server.requestCount("/image.png") == 4)
        }
    }

    @Test("an entry stored for one Vary value does not answer another without the server's word (here a new version); Vary: * is not stored")
    func vary() async throws {
        try await withScenario { server, pipeline, disk, url in
            setHeaders([.cacheControl: "max-age=60", .vary: "Accept"])
            let webp = ImageRequest(url: url, headers: [.accept: "image/webp"])
            let png = ImageRequest(url: url, headers: [.accept: "image/png"])
            _ = try await pipeline.image(for: webp)
            #expect(try await pipeline.image(for: webp).source == .disk)
            image.state.withLock { $0.version = 2 }
            let other = try await pipeline.image(for: png)
            #expect(other.source == .network && other.image.width == 42)
            #expect(server.lastRequest("/image.png")?.headers[.ifNoneMatch] == "\"v1\"", "asked whether the stored one fits")
            #expect(server.requestCount("/image.png") == 2)

            try disk.removeAll()
            setHeaders([.cacheControl: "max-age=60", .vary: "*"])
            _ = try await pipeline.image(for: url)
            #expect(!disk.containsData(forKey: url.absoluteString))
        }
    }

    @Test("stale-while-revalidate serves the stale entry at once and refreshes it in the background")
    func staleWhileRevalidate() async throws {
        try await withScenario { server, pipeline, disk, url in
            setHeaders([.cacheControl: "max-age=10, stale-while-revalidate=60"])
            _ = try await pipeline.image(for: url)
            image.state.withLock { $0.version = 2 }
            clock.advance(by: .seconds(30))
            let stale = try await pipeline.image(for: url)
            #expect(stale.source == .disk && stale.image.width == 41)
            guard case .stale(.revalidatingInBackground) = stale.freshness else {
                Issue.record("\(stale.freshness)")
                return
            }
            #expect(await pipeline.waitForBackgroundRefreshes(timeout: .seconds(600)))
            #expect(server.requestCount("/image.png") == 2)
            #expect(disk.cachedData(forKey: url.absoluteString)?.data == VersionedImage.body(version: 2))
            let fresh = try await pipeline.image(for: url)
            #expect(fresh.source == .disk && fresh.image.width == 42 && !fresh.freshness.isStale)

            clock.advance(by: .seconds(100))  // past both windows: revalidated before use
            image.state.withLock { $0.version = 3 }
            #expect(try await pipeline.image(for: url).image.width == 43)
        }
    }

    @Test("stale-if-error serves the stale entry on a 503 within its window, and not after it")
    func staleIfError() async throws {
        try await withScenario(servesStaleWhenOffline: false) { _, pipeline, _, url in
            setHeaders([.cacheControl: "max-age=10, stale-if-error=60"])
            _ = try await pipeline.image(for: url)
            image.state.withLock { $0.status = 503 }
            clock.advance(by: .seconds(30))
            let stale = try await pipeline.image(for: url)
            guard case .stale(.networkFailed(.httpStatus(503, _))) = stale.freshness else {
                Issue.record("\(stale.freshness)")
                return
            }
            clock.advance(by: .seconds(60))
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: url) }
        }
    }

    @Test("offline: a reset connection serves the stale entry, unless must-revalidate or the policy is off")
    func offline() async throws {
        try await withScenario { server, pipeline, _, url in
            setHeaders([.cacheControl: "max-age=10"])
            _ = try await pipeline.image(for: url)
            server.setRoute("/image.png", .init(behaviour: .reset))
            clock.advance(by: .seconds(3600))
            let stale = try await pipeline.image(for: url)
            guard case .stale(.networkFailed(.network)) = stale.freshness else {
                Issue.record("\(stale.freshness)")
                return
            }
            #expect(stale.image.width == 41)
        }
        try await withScenario { server, pipeline, _, url in
            setHeaders([.cacheControl: "max-age=10, must-revalidate"])
            _ = try await pipeline.image(for: url)
            server.setRoute("/image.png", .init(behaviour: .reset))
            clock.advance(by: .seconds(3600))
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: url) }
        }
        try await withScenario(servesStaleWhenOffline: false) { server, pipeline, _, url in
            _ = try await pipeline.image(for: url)
            server.setRoute("/image.png", .init(behaviour: .reset))
            clock.advance(by: .seconds(3600))
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: url) }
        }
    }

    @Test("a dead origin: a refused connection fails at once, and a stale entry stands in at once")
    func deadOrigin() async throws {
        // Given a stale-if-error entry from an origin that has since stopped,
        // behind a loader whose connect timeout is far longer than any
        // loaded machine takes to see a connection refused
        let connectTimeout = Duration.seconds(300)
        let server = try await TestImageServer.start()
        server.setRoute("/image.png") { [image] in image.respond(to: $0) }
        setHeaders([.cacheControl: "max-age=10, stale-if-error=3600"])
        let loader = HTTPDataLoader(configuration: .init(connectTimeout: connectTimeout))
        let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
        defer { disk.close() }
        let pipeline = ImagePipeline(
            configuration: .init(
                dataLoader: loader, imageCache: nil, dataCache: disk, currentDate: { [clock] in clock.date }
            ))
        let url = server.url("/image.png")
        _ = try await pipeline.image(for: url)
        try await server.shutdown()
        clock.advance(by: .seconds(60))

        // When the stale entry is asked for, it is served on the first refused connection
        let staleStart = ContinuousClock.now
        let stale = try await pipeline.image(for: url)
        let staleTime = ContinuousClock.now - staleStart
        if case .stale(.networkFailed(.network)) = stale.freshness {} else { Issue.record("\(stale.freshness)") }

        // And a URL with nothing stored fails with a network error after the
        // retry policy's attempts, not after a connect timeout per attempt
        let failureStart = ContinuousClock.now
        await #expect {
            try await pipeline.image(for: server.url("/other.png"))
        } throws: { error in
            guard case ImagePipeline.Error.network(_, let underlying) = error else { return false }
            return underlying.code == .network
        }
        let failureTime = ContinuousClock.now - failureStart
        print("dead origin: stale entry served in \(staleTime), uncached fetch failed in \(failureTime)")
        // Bounds derived from the work, not the machine: waiting on the
        // refused port until the connect timeout would take at least that long.
        #expect(staleTime < connectTimeout && failureTime < connectTimeout)
        try await loader.shutdown()
    }

    @Test("a 404 is not an outage: the stale entry is not served for it")
    func notFoundIsNotOffline() async throws {
        try await withScenario { _, pipeline, _, url in
            _ = try await pipeline.image(for: url)
            image.state.withLock { $0.status = 404 }
            clock.advance(by: .seconds(3600))
            let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: url) }
            guard case .httpStatus(404, _) = error else {
                Issue.record("\(String(describing: error))")
                return
            }
        }
    }

    @Test("request policies: reload ignores a fresh entry, revalidate asks anyway, cacheOnly never asks")
    func networkPolicies() async throws {
        try await withScenario { server, pipeline, _, url in
            _ = try await pipeline.image(for: url)
            let reload = try await pipeline.image(for: ImageRequest(url: url, networkPolicy: .reload))
            #expect(reload.source == .network && server.lastRequest("/image.png")?.headers[.ifNoneMatch] == nil)

            let revalidate = try await pipeline.image(for: ImageRequest(url: url, networkPolicy: .revalidate))
            guard case .revalidated = revalidate.freshness else {
                Issue.record("\(revalidate.freshness)")
                return
            }
            #expect(server.requestCount("/image.png") == 3)

            clock.advance(by: .seconds(3600))
            let cacheOnly = try await pipeline.image(for: ImageRequest(url: url, networkPolicy: .cacheOnly))
            guard case .stale(.cacheOnly) = cacheOnly.freshness else {
                Issue.record("\(cacheOnly.freshness)")
                return
            }
            #expect(server.requestCount("/image.png") == 3)

            let missing = ImageRequest(url: server.url("/other.png"), networkPolicy: .cacheOnly)
            let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: missing) }
            guard case .notCached(let key) = error else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(key.hasSuffix("/other.png") && server.totalRequestCount == 3)
        }
    }

    @Test("ignoring HTTP headers keeps even no-store responses and serves them however old")
    func ignoringHeaders() async throws {
        try await withScenario(policy: .ignoreHTTPHeaders) { server, pipeline, _, url in
            setHeaders([.cacheControl: "no-store, max-age=0"])
            _ = try await pipeline.image(for: url)
            clock.advance(by: .seconds(86_400 * 30))
            let response = try await pipeline.image(for: url)
            #expect(response.source == .disk && !response.freshness.isStale)
            #expect(server.requestCount("/image.png") == 1)
        }
    }

    @Test("a 304 to a request that was not conditional is an error, and nothing is stored")
    func unexpectedNotModified() async throws {
        try await withScenario { server, pipeline, disk, url in
            server.setRoute("/image.png", .init(status: 304))
            let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: url) }
            guard case .httpStatus(304, _) = error else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(!disk.containsData(forKey: url.absoluteString))
        }
    }

    @Test("entries stored by the app through the cache API carry no HTTP metadata and are served as they are")
    func appStoredEntries() async throws {
        try await withScenario { server, pipeline, _, url in
            try await pipeline.cache.storeData(VersionedImage.body(version: 5), forKey: url.absoluteString)
            clock.advance(by: .seconds(86_400 * 365))
            let response = try await pipeline.image(for: url)
            #expect(response.source == .disk && response.image.width == 45)
            #expect(server.requestCount("/image.png") == 0)
        }
    }
}
