import Foundation
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoServer

/// The service without its HTTP server, against a source server on
/// 127.0.0.2 (the one opened network) that misbehaves on request.
@Suite("Image service: signing, formats, statuses, conditional requests, HEAD")
struct ImageServiceTests {
    static let signing = try! URLSigning(hexKeys: "a1b2c3d4", hexSalts: "0f0e")

    /// A service whose sources are on `server`, unsigned URLs allowed unless `signedOnly`.
    /// Its source cache is in `folder`, which the test keeps alive. Its
    /// source timeout is ten minutes unless a test is about timeouts, so
    /// that however slowly a loaded machine runs a test, no source it holds
    /// times out.
    static func service(
        in folder: TemporaryDirectory, signedOnly: Bool = false, sourceTimeout: Duration = .seconds(600),
        slots: Int = 4, queue: Int = 64, queueTimeout: Duration = .seconds(600), sourceAdmission: DiskCache.Admission = .secondStore(window: 64)
    ) -> ImageService {
        let configuration = ImageService.Configuration(
            signing: signing,
            allowsUnsigned: !signedOnly,
            sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]),
            cacheFolder: folder.path,
            sourceAdmission: sourceAdmission,
            sourceTimeout: sourceTimeout,
            maximumConcurrentTransformations: slots,
            queueCapacity: queue,
            queueTimeout: queueTimeout
        )
        return try! ImageService(configuration: configuration)
    }

    static let cacheable: HTTPFields = [.cacheControl: "max-age=3600"]

    /// A source server with a cacheable 200x150 JPEG at /photo.jpg, and the unsigned path of its 50 px WebP.
    static func cacheablePhoto() async throws -> (server: TestImageServer, path: String) {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute(
            "/photo.jpg", .init(headers: cacheable, body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 200, height: 150))))
        return (server, path("w:50/f:webp", server.url("/photo.jpg")))
    }

    static func path(_ options: String, _ source: URL, signature: String = "unsafe") -> String {
        let rest = "/" + (options.isEmpty ? "" : options + "/") + URLSigning.base64URL(Array(source.absoluteString.utf8))
        return "/" + (signature == "sign" ? signing.signature(for: rest) : signature) + rest
    }

    /// `imago_result_cache_hits_total` as `/metrics` prints it now.
    static func resultCacheHits(_ service: ImageService) -> Int? {
        let line = service.metrics.exposition(queueLength: 0).split(separator: "\n").first { $0.hasPrefix("imago_result_cache_hits_total ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    static func decoded(_ response: ServiceResponse) throws -> Image {
        try ImagePipeline.decode(
            response.body, options: ImageDecodingOptions(), decoders: ImagePipeline.Configuration(trimsMemoryOnPressure: false).decoders)
    }

    @Test("thumbnails in the negotiated format: AVIF, then WebP, when accepted, else JPEG (PNG with alpha); explicit formats do not vary")
    func formats() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute(
            "/photo.jpg", .init(headers: Self.cacheable, body: try JPEGEncoder(quality: 90).encode(FormatFixtures.quadrants(width: 400, height: 300)))
        )
        server.setRoute(
            "/alpha.png",
            .init(headers: Self.cacheable, body: try PNGEncoder().encode(FormatFixtures.quadrants(width: 400, height: 300, alpha: true))))
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)
        let cases: [(String, String, String, String, Bool)] = [
            ("/photo.jpg", "w:100", "image/avif,image/webp,*/*", "image/avif", true),
            ("/photo.jpg", "w:100", "image/webp,*/*", "image/webp", true),
            ("/alpha.png", "w:100/f:avif", "", "image/avif", false),
            ("/photo.jpg", "w:100", "image/jpeg,*/*", "image/jpeg", true),
            ("/alpha.png", "w:100", "", "image/png", true),
            ("/photo.jpg", "w:100/f:png", "image/webp", "image/png", false),
            ("/photo.jpg", "w:100/f:jpeg", "image/webp", "image/jpeg", false),
        ]
        for (source, options, accept, type, varies) in cases {
            let response = await service.respond(to: ServiceRequest(path: Self.path(options, server.url(source)), headers: [.accept: accept]))
            #expect(response.status == 200, "\(source) \(options): \(String(decoding: response.body, as: UTF8.self))")
            #expect(response.headers[.contentType] == type, "\(source) \(options) \(accept)")
            #expect((response.headers[.vary] == "Accept") == varies)
            let image = try Self.decoded(response)
            #expect(image.size == ImageSize(width: 100, height: 75))
            #expect(FormatFixtures.showsQuadrants(image, alpha: source == "/alpha.png", tolerance: 24))
        }
        // imgproxy's resizing types: fit, fill (cut to the box), force.
        for (options, size) in [("w:100/h:100", (100, 75)), ("rs:fill:100:100", (100, 100)), ("rt:force/w:100/h:100", (100, 100))] {
            let response = await service.respond(to: ServiceRequest(path: Self.path(options + "/f:png", server.url("/photo.jpg"))))
            #expect(try Self.decoded(response).size == ImageSize(width: size.0, height: size.1), "\(options)")
        }
        // The source, fresh for an hour, was downloaded for the first answer
        // and again, to be kept, for the second; the others read it from disk.
        #expect(server.requestCount("/photo.jpg") == 2)
        try await server.shutdown()
    }

    @Test("sources are kept from their second fetch, or from their first with admission .always")
    func sourceAdmission() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants(width: 200, height: 150))
        for name in ["/once.jpg", "/twice.jpg", "/always.jpg"] { server.setRoute(name, .init(headers: Self.cacheable, body: jpeg)) }
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)
        let sources = try #require(service.pipeline.configuration.dataCache as? DiskCache)
        func answer(_ options: String, _ name: String, from service: ImageService) async -> Int {
            await service.respond(to: ServiceRequest(path: Self.path(options, server.url(name)))).status
        }

        #expect(await answer("w:40", "/once.jpg", from: service) == 200)
        #expect(sources.count == 0, "a source made into one answer is not written")
        for width in [50, 60, 70] { #expect(await answer("w:\(width)", "/twice.jpg", from: service) == 200) }
        #expect(sources.containsData(forKey: server.url("/twice.jpg").absoluteString))
        #expect(server.requestCount("/twice.jpg") == 2, "fetched twice, then read from disk")

        let alwaysFolder = TemporaryDirectory()
        let always = Self.service(in: alwaysFolder, sourceAdmission: .always)
        #expect((always.pipeline.configuration.dataCache as? DiskCache)?.configuration.sizeLimit == 1 << 30, "the default source disk limit")
        for width in [50, 60] { #expect(await answer("w:\(width)", "/always.jpg", from: always) == 200) }
        #expect(server.requestCount("/always.jpg") == 1)
        try await server.shutdown()
    }

    @Test("signing: signed URLs pass; tampered, unsigned and foreign ones are 403")
    func signing() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants())))
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder, signedOnly: true)
        let signed = Self.path("w:32", server.url("/photo.jpg"), signature: "sign")
        #expect(await service.respond(to: ServiceRequest(path: signed)).status == 200)
        let tampered = signed.replacingOccurrences(of: "w:32", with: "w:33")
        let unsigned = Self.path("w:32", server.url("/photo.jpg"))
        let foreign = Self.path("w:32", server.url("/photo.jpg"), signature: try URLSigning(hexKeys: "00", hexSalts: "").signature(for: "/w:32"))
        for path in [tampered, unsigned, foreign] {
            let response = await service.respond(to: ServiceRequest(path: path))
            #expect(response.status == 403, "\(path)")
            #expect(
                String(decoding: response.body, as: UTF8.self).contains("signature")
                    || String(decoding: response.body, as: UTF8.self).contains("unsigned"))
        }
        try await server.shutdown()
    }

    @Test("allowed sizes let unsigned URLs through for those boxes only; presets expand")
    func allowedSizesAndPresets() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 200, height: 150))))
        let folder = TemporaryDirectory()
        let service = try ImageService(
            configuration: .init(
                allowedSizes: [ImageSize(width: 32, height: 0), ImageSize(width: 64, height: 64)],
                sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]),
                presets: try Presets(lines: ["square=w:64/h:64/rt:fill"]), cacheFolder: folder.path
            ))
        for (options, status) in [("w:32", 200), ("w:16/dpr:2", 200), ("pr:square/f:png", 200), ("w:64/h:64", 200), ("w:33", 403), ("w:64", 403)] {
            let response = await service.respond(to: ServiceRequest(path: Self.path(options, server.url("/photo.jpg"))))
            #expect(response.status == status, "\(options): \(String(decoding: response.body, as: UTF8.self))")
        }
        let square = await service.respond(to: ServiceRequest(path: Self.path("pr:square/f:png", server.url("/photo.jpg"))))
        #expect(try Self.decoded(square).size == ImageSize(width: 64, height: 64))
        try await server.shutdown()
    }

    @Test("every failure has its status and says why; none is a 500")
    func statuses() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let refused = try await TestImageServer.start(host: "127.0.0.1")
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants())
        server.setRoute("/html", .htmlErrorPage)
        server.setRoute("/gone", .init(status: 410))
        server.setRoute("/broken", .init(status: 500))
        server.setRoute("/garbage", .garbage(count: 4_000))
        server.setRoute("/truncated.jpg", .init(body: jpeg.prefix(40)))
        server.setRoute("/slow", .init(body: jpeg, behaviour: .drip(chunkSize: 100, interval: .seconds(5))))
        server.setRoute("/reset", .init(behaviour: .reset))
        var huge = jpeg
        let frame = try #require(huge.indices.dropLast().first { huge[$0] == 0xFF && huge[$0 + 1] == 0xC0 })
        for (offset, byte) in [UInt8(0xEA), 0x60, 0xEA, 0x60].enumerated() { huge[frame + 5 + offset] = byte }
        server.setRoute("/huge.jpg", .init(body: huge))
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)
        let cases: [(String, Int, String)] = [
            (Self.path("w:100001", server.url("/x.jpg")), 400, "w:100001"),
            (Self.path("w:10", URL(string: "file:///etc/passwd")!), 400, "scheme"),
            (Self.path("w:10", refused.url("/a.jpg")), 403, "loopback"),
            (Self.path("w:10", server.url("/missing")), 404, "404"),
            (Self.path("w:10", server.url("/gone")), 410, "410"),
            (Self.path("w:10", server.url("/broken")), 502, "500"),
            (Self.path("w:10", server.url("/reset")), 502, "source"),
            (Self.path("w:10", server.url("/html")), 415, "HTML"),
            (Self.path("w:10", server.url("/garbage")), 415, "not an image"),
            (Self.path("w:10", server.url("/truncated.jpg")), 422, "does not decode"),
            (Self.path("w:10", server.url("/huge.jpg")), 413, "60000x60000"),
            ("/unsafe/w:10", 400, "source"),
            ("/unsafe/w:10/plain/", 400, "source"),
        ]
        // A body that never ends is cut off at the source size limit.
        server.setRoute("/endless", .init(body: Data(repeating: 0xAB, count: 64 << 10), behaviour: .endless))
        let smallFolder = TemporaryDirectory()
        let small = try ImageService(
            configuration: .init(
                allowsUnsigned: true, sourcePolicy: service.configuration.sourcePolicy, cacheFolder: smallFolder.path, maximumSourceSize: 1 << 20
            ))
        let endless = await small.respond(to: ServiceRequest(path: Self.path("w:10", server.url("/endless"))))
        #expect(endless.status == 413, "\(String(decoding: endless.body, as: UTF8.self))")
        // A gzip bomb: 16 KiB on the wire, 16 MiB inflated, refused as it inflates past the limit.
        server.setRoute("/bomb", .init(headers: [.contentEncoding: "gzip"], body: try gzipped(Data(count: 16 << 20))))
        let bomb = await small.respond(to: ServiceRequest(path: Self.path("w:10", server.url("/bomb"))))
        #expect(bomb.status == 413, "\(String(decoding: bomb.body, as: UTF8.self))")
        for (path, status, says) in cases {
            let response = await service.respond(to: ServiceRequest(path: path))
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(response.status == status, "\(path): \(text)")
            #expect(text.contains(says), "\(path): \(text)")
            #expect(response.headers[.cacheControl] == "public, max-age=10")
        }
        #expect(refused.connectionCount == 0)
        // 100 bytes every 5 s run past a 2 s timeout.
        let impatient = Self.service(in: TemporaryDirectory(), sourceTimeout: .seconds(2))
        let slow = await impatient.respond(to: ServiceRequest(path: Self.path("w:10", server.url("/slow"))))
        #expect(slow.status == 504 && String(decoding: slow.body, as: UTF8.self).contains("timed out"))
        #expect(await service.respond(to: ServiceRequest(method: .post, path: "/health")).status == 405)
        #expect(await service.respond(to: ServiceRequest(path: "/health")).status == 200)
        // Every answer above is counted by status.
        let metrics = String(decoding: await service.respond(to: ServiceRequest(path: "/metrics")).body, as: UTF8.self)
        for (status, count) in [(400, 4), (403, 1), (404, 1), (405, 1), (410, 1), (413, 1), (415, 2), (422, 1), (502, 2), (200, 1)] {
            #expect(metrics.contains("imago_http_requests_total{status=\"\(status)\"} \(count)"), "\(status) × \(count) in\n\(metrics)")
        }
        #expect(metrics.contains("imago_http_request_duration_seconds_count"))
        #expect(metrics.contains("imago_http_requests_in_flight 1"))
        try await server.shutdown()
        try await refused.shutdown()
    }

    @Test("admission: 429 beyond the queue at once; a download holds no transformation turn; waiting past the queue timeout, 503")
    func overload() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let other = try await TestImageServer.start(host: "127.0.0.2")
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants())
        server.setRoute("/photo.jpg", .init(body: jpeg))
        other.setRoute("/photo.jpg", .init(body: jpeg))
        /// Request `index` of `service` for the photo on `origin`, its status and Retry-After.
        func request(_ service: ImageService, _ index: Int, on origin: TestImageServer) async -> (Int, String?) {
            let response = await service.respond(to: ServiceRequest(path: Self.path("w:\(10 + index)", origin.url("/photo.jpg"))))
            return (response.status, response.headers[.retryAfter])
        }

        // A queue of two, both downloading (their source held): the next two are refused at once.
        let service = Self.service(in: TemporaryDirectory(), slots: 1, queue: 2)
        server.holdResponses()
        async let first = request(service, 0, on: server)
        async let second = request(service, 1, on: server)
        await server.waitForRequests("/photo.jpg", count: 1)
        while service.admission.queueLength < 2 { await Task.yield() }
        let refused = [await request(service, 2, on: other), await request(service, 3, on: other)]
        #expect(refused.allSatisfy { $0 == (429, "1") }, "\(refused)")
        server.releaseResponses()
        for answer in [await first, await second] { #expect(answer.0 == 200, "\(answer)") }

        // One transformation turn: a source that is slow to come does not
        // keep another request from being transformed.
        let oneTurn = Self.service(in: TemporaryDirectory(), slots: 1, queue: 4)
        server.holdResponses()
        async let slow = request(oneTurn, 0, on: server)
        await server.waitForRequests("/photo.jpg", count: 2)
        #expect(await request(oneTurn, 1, on: other) == (200, nil))
        server.releaseResponses()
        let slowAnswer = await slow
        #expect(slowAnswer.0 == 200, "\(slowAnswer)")

        // Two download turns (twice the transformations), both held: a third
        // request waits for one past its deadline. The deadline is long
        // enough for one held request to wait out the other's
        // transformation once they are released (100 ms was not, under
        // ThreadSanitizer on a loaded machine); the third request's wait
        // ends by the deadline alone, since the two stay held until it has.
        let strict = Self.service(in: TemporaryDirectory(), slots: 1, queue: 3, queueTimeout: .seconds(5))
        #expect(strict.admission.downloadLimit == 2)
        server.holdResponses()
        async let heldFirst = request(strict, 0, on: server)
        async let heldSecond = request(strict, 1, on: server)
        await server.waitForRequests("/photo.jpg", count: 3)
        while strict.admission.queueLength < 2 { await Task.yield() }
        let late = await request(strict, 2, on: other)
        #expect(late == (503, "1"), "\(late)")
        #expect(other.requestCount("/photo.jpg") == 1, "the late request never downloaded")
        server.releaseResponses()
        for answer in [await heldFirst, await heldSecond] { #expect(answer.0 == 200, "\(answer)") }
        try await server.shutdown()
        try await other.shutdown()
    }

    @Test(
        "the result cache: identical requests in flight make one answer; repeats are served from it, whatever the signature; memory keeps the ones asked for again"
    )
    func resultCache() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 300, height: 200))))
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)
        let unsigned = Self.path("w:64/f:webp", server.url("/photo.jpg"))
        server.holdResponses()
        let tags = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<8 { group.addTask { await service.respond(to: ServiceRequest(path: unsigned)).headers[.eTag] } }
            await server.waitForRequests("/photo.jpg", count: 1)
            server.releaseResponses()
            return await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(Set(tags).count == 1 && tags[0] != nil)
        #expect(server.requestCount("/photo.jpg") == 1)
        #expect(service.results.count == 0, "a new answer goes to disk only")
        // A signed URL for the same variant is a result-cache hit.
        let signed = Self.path("w:64/f:webp", server.url("/photo.jpg"), signature: "sign")
        let again = await service.respond(to: ServiceRequest(path: signed))
        #expect(again.status == 200 && again.headers[.eTag] == tags[0])
        let metrics = String(decoding: await service.respond(to: ServiceRequest(path: "/metrics")).body, as: UTF8.self)
        #expect(metrics.contains("imago_result_cache_hits_total 1"), "\(metrics)")
        #expect(service.results.count == 1, "asked for again, it is kept in memory too")
        try await server.shutdown()
    }

    @Test(
        "an answer is sent before its write to disk lands, served from the pending writes meanwhile; close() waits for the write",
        .timeLimit(.minutes(2))  // an answer that waited for its write would hang on the held disk threads
    )
    func writeBehind() async throws {
        let (server, path) = try await Self.cacheablePhoto()
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)
        // Every disk thread held: nothing can be written until they are let go. (The
        // source, fetched once, is only remembered by the source cache's admission:
        // the request itself needs no disk thread.)
        let threads = service.pipeline.configuration.diskThreadCount
        let started = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        for _ in 0..<threads {
            service.pipeline.diskThreads.submit(priority: .veryHigh) {
                started.signal()
                held.wait()
            }
        }
        for _ in 0..<threads { await Task.detached { started.wait() }.value }

        let first = await service.respond(to: ServiceRequest(path: path))
        #expect(first.status == 200)
        let again = await service.respond(to: ServiceRequest(path: path))
        #expect(again.status == 200 && again.body == first.body)
        #expect(Self.resultCacheHits(service) == 1, "served from the write pending")
        #expect(server.requestCount("/photo.jpg") == 1)

        // close() returns once the write has landed: a new service answers from disk.
        let closed = Task.detached { service.close() }
        for _ in 0..<threads { held.signal() }
        await closed.value
        try await server.shutdown()
        let after = Self.service(in: folder)
        let third = await after.respond(to: ServiceRequest(path: path))
        #expect(third.status == 200 && third.body == first.body && third.headers[.eTag] == first.headers[.eTag])
        #expect(Self.resultCacheHits(after) == 1, "read from disk, with the source gone")
        after.close()
    }

    @Test("encoded answers survive a restart: a new service on the same folder answers from disk without the source")
    func resultsOnDisk() async throws {
        let (server, path) = try await Self.cacheablePhoto()
        let folder = TemporaryDirectory()
        let before = Self.service(in: folder)
        let first = await before.respond(to: ServiceRequest(path: path))
        #expect(first.status == 200)
        before.close()

        let after = Self.service(in: folder)
        let second = await after.respond(to: ServiceRequest(path: path))
        #expect(second.status == 200 && second.body == first.body && second.headers[.eTag] == first.headers[.eTag])
        #expect(server.requestCount("/photo.jpg") == 1)
        let metrics = String(decoding: await after.respond(to: ServiceRequest(path: "/metrics")).body, as: UTF8.self)
        #expect(metrics.contains("imago_result_cache_hits_total 1"))
        after.close()
        try await server.shutdown()
    }

    @Test("the source's HTTP rules: max-age never beyond its freshness, Last-Modified passed on, a revalidated source reuses the answer")
    func sourceFreshness() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let jpeg = try JPEGEncoder().encode(FormatFixtures.quadrants(width: 200, height: 150))
        let modified = "Tue, 24 Nov 2026 08:00:00 GMT"
        server.setRoute("/short.jpg", .init(headers: [.cacheControl: "max-age=60", .lastModified: modified], body: jpeg))
        server.setRoute("/revalidated.jpg", .init(headers: [.cacheControl: "no-cache", .eTag: "\"v1\""], body: jpeg))
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)

        let short = await service.respond(to: ServiceRequest(path: Self.path("w:50/f:png", server.url("/short.jpg"))))
        #expect(short.status == 200)
        let maxAge = try #require(short.headers[.cacheControl]?.split(separator: "=").last.flatMap { Int($0) })
        #expect((55...60).contains(maxAge), "\(String(describing: short.headers[.cacheControl]))")
        #expect(short.headers[.lastModified] == modified)

        // no-cache: every request asks the source again (the second time in
        // full: a source is kept from its second fetch); its 304 keeps the answer.
        let path = Self.path("w:50/f:png", server.url("/revalidated.jpg"))
        let first = await service.respond(to: ServiceRequest(path: path))
        let second = await service.respond(to: ServiceRequest(path: path))
        let third = await service.respond(to: ServiceRequest(path: path))
        #expect(first.status == 200 && second.status == 200 && third.status == 200)
        #expect(first.headers[.cacheControl] == "public, max-age=0")
        #expect(second.headers[.eTag] == first.headers[.eTag] && third.headers[.eTag] == first.headers[.eTag])
        #expect(server.requestCount("/revalidated.jpg") == 3)
        #expect(server.lastRequest("/revalidated.jpg")?.headers[.ifNoneMatch] == "\"v1\"")
        try await server.shutdown()
    }

    @Test("HEAD answers like GET without the body; a matching If-None-Match is a 304; options never share bytes")
    func conditionalAndHead() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 200, height: 150))))
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)
        let path = Self.path("w:50/f:webp", server.url("/photo.jpg"))
        let get = await service.respond(to: ServiceRequest(path: path))
        #expect(Self.resultCacheHits(service) == 0)
        let head = await service.respond(to: ServiceRequest(method: .head, path: path))
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.headers[.contentLength] == String(get.body.count))
        #expect(head.headers[.eTag] == get.headers[.eTag] && get.headers[.eTag] != nil)
        let etag = try #require(get.headers[.eTag])
        let notModified = await service.respond(to: ServiceRequest(path: path, headers: [.ifNoneMatch: "\"other\", \(etag)"]))
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(await service.respond(to: ServiceRequest(path: path, headers: [.ifNoneMatch: "\"other\""])).status == 200)
        #expect(Self.resultCacheHits(service) == 3, "HEAD, the 304 and the 200 after it came from the result cache")

        // Requests that differ in any option or format get different bytes.
        var seen: [String: String] = [:]
        for options in [
            "w:50/f:webp", "w:51/f:webp", "w:50/f:png", "w:50/f:webp/imago_gray:1", "w:50/f:webp/bl:2", "w:50/f:webp/imago_radius:5",
            "w:50/f:webp/q:40", "rs:fill:50:50/f:webp", "rs:fill:50:50/g:we/f:webp", "w:50/f:webp/pd:4/bg:f00", "w:50/f:webp/rot:90",
        ] {
            let response = await service.respond(to: ServiceRequest(path: Self.path(options, server.url("/photo.jpg"))))
            let tag = try #require(response.headers[.eTag])
            #expect(seen[tag] == nil, "\(options) shares bytes with \(seen[tag] ?? "")")
            seen[tag] = options
        }
        try await server.shutdown()
    }

    @Test("If-Modified-Since: a 304 when the source's Last-Modified is not later, ignored when If-None-Match is sent")
    func ifModifiedSince() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let modified = "Tue, 24 Nov 2026 08:00:00 GMT"
        server.setRoute(
            "/dated.jpg",
            .init(
                headers: [.cacheControl: "max-age=3600", .lastModified: modified],
                body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 200, height: 150))
            ))
        server.setRoute(
            "/undated.jpg", .init(headers: Self.cacheable, body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 100, height: 80))))
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)
        let path = Self.path("w:50/f:png", server.url("/dated.jpg"))
        func status(_ headers: HTTPFields, _ path: String = path) async -> Int {
            await service.respond(to: ServiceRequest(path: path, headers: headers)).status
        }
        #expect(await status([.ifModifiedSince: modified]) == 304)
        #expect(await status([.ifModifiedSince: "Wed, 25 Nov 2026 08:00:00 GMT"]) == 304)
        #expect(await status([.ifModifiedSince: "Mon, 23 Nov 2026 08:00:00 GMT"]) == 200)
        #expect(await status([.ifModifiedSince: "not a date"]) == 200)
        // If-None-Match wins (RFC 9110 §13.1.3): a stale tag is a full answer whatever the date says.
        #expect(await status([.ifNoneMatch: "\"old\"", .ifModifiedSince: modified]) == 200)
        // A source without Last-Modified gives no date to compare.
        #expect(await status([.ifModifiedSince: modified], Self.path("w:50/f:png", server.url("/undated.jpg"))) == 200)
        try await server.shutdown()
    }

    @Test("f:auto weighs the Accept field: q=0 refuses a format, wildcards do not offer AVIF or WebP")
    func acceptWeights() throws {
        #expect(try OutputFormat(.auto, accept: "image/avif;q=0, image/webp") == .webp)
        #expect(try OutputFormat(.auto, accept: "image/avif; q=0.5,image/webp") == .avif)
        #expect(try OutputFormat(.auto, accept: "IMAGE/WEBP") == .webp)
        #expect(try OutputFormat(.auto, accept: "image/webp;q=0.0, image/*") == .jpegOrPNG)
        #expect(try OutputFormat(.auto, accept: "*/*") == .jpegOrPNG)
        #expect(try OutputFormat(.auto, accept: "image/avifx, text/image/webp") == .jpegOrPNG)
    }

    @Test("a cancelled request leaves shared work to the others; the last one to leave cancels it")
    func cancellation() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 120, height: 90))))
        server.setRoute("/alone.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 120, height: 90))))
        let folder = TemporaryDirectory()
        let service = Self.service(in: folder)
        server.holdResponses()
        let path = Self.path("w:40/f:png", server.url("/photo.jpg"))
        let leaving = Task { await service.respond(to: ServiceRequest(path: path)) }
        let staying = Task { await service.respond(to: ServiceRequest(path: path)) }
        await server.waitForRequests("/photo.jpg", count: 1)
        leaving.cancel()
        server.releaseResponses()
        #expect(await staying.value.status == 200)
        #expect(server.requestCount("/photo.jpg") == 1)

        // Alone, a cancelled request cancels the work: it ends long before the source timeout.
        server.holdResponses()
        let alone = Task { await service.respond(to: ServiceRequest(path: Self.path("w:40/f:png", server.url("/alone.jpg")))) }
        await server.waitForRequests("/alone.jpg", count: 1)
        alone.cancel()
        #expect(await alone.value.status == 503)
        server.releaseResponses()
        try await server.shutdown()
    }
}
