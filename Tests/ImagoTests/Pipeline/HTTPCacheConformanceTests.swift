import Foundation
import ImagoConcurrency
import ImagoSandbox
import Testing

@testable import Imago

/// An origin whose answer the test sets, that answers a conditional request
/// with a 304 when its ETag matches, and a Range with a 206.
final class ScriptedOrigin: Sendable {
    struct Answer {
        var status = 200
        var headers: HTTPFields = [:]
        var body = Data("0123456789ABCDEF".utf8)
        /// The fields a 304 carries (the answer's own when `nil`).
        var notModifiedHeaders: HTTPFields?
        var honoursRanges = false
    }

    let answer = Locked(Answer())

    func set(_ change: (inout Answer) -> Void) { answer.withLock(change) }

    func respond(to request: TestImageServer.Request) -> TestImageServer.Response {
        let answer = answer.withLock { $0 }
        if let etag = answer.headers.first(.eTag), request.headers.first(.ifNoneMatch) == etag {
            return .init(status: 304, headers: answer.notModifiedHeaders ?? answer.headers)
        }
        if answer.honoursRanges, let field = request.headers.first(.range), let range = ByteRange(field),
            let bounds = range.bounds(in: answer.body.count)
        {
            var headers = answer.headers
            headers[.contentRange] = "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(answer.body.count)"
            return .init(status: 206, headers: headers, body: answer.body.subdata(in: bounds.lowerBound..<(bounds.upperBound + 1)))
        }
        return .init(status: answer.status, headers: answer.headers, body: answer.body)
    }
}

/// One rule of RFC 9110/9111 per test, checked through `data(for:)` (and
/// the image path where it differs) against the in-process server: what is
/// stored, with which fields, for how long, and what a request can ask.
@Suite("HTTP cache conformance: stored fields, statuses, Age, parsing, request directives, ranges, invalidation", .timeLimit(.minutes(10)))
struct HTTPCacheConformanceTests {
    let folder = TemporaryDirectory()
    /// On a whole second, so that a Date the origin sends is exactly the clock's time.
    let clock = ManualClock(epoch: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
    let origin = ScriptedOrigin()

    /// Runs `body` with the origin at `/r`, a pipeline with a disk cache,
    /// no memory cache, no retries, the test's clock, and a loader that
    /// follows no redirects.
    func withOrigin(_ body: (TestImageServer, ImagePipeline, URL) async throws -> Void) async throws {
        try await withTestServer(.init(readTimeout: .seconds(60), maximumRedirects: 0)) { server, loader in
            server.setRoute("/r") { [origin] in origin.respond(to: $0) }
            let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
            defer { disk.close() }
            let configuration = ImagePipeline.Configuration(
                dataLoader: loader, imageCache: nil, dataCache: disk, retryPolicy: .none, currentDate: { [clock] in clock.date }
            )
            try await body(server, ImagePipeline(configuration: configuration), server.url("/r"))
        }
    }

    /// Whether the second of two requests (the given seconds apart) was
    /// answered from storage without asking the server.
    func reused(
        _ headers: HTTPFields, status: Int = 200, after seconds: Int = 10, request: HTTPFields = [:]
    ) async throws -> Bool {
        var reused = false
        try await withOrigin { server, pipeline, url in
            origin.set {
                $0.status = status
                $0.headers = headers
            }
            let first = try await pipeline.data(for: ImageRequest(url: url))
            #expect(first.statusCode == status && first.source == .network)
            clock.advance(by: .seconds(seconds))
            let second = try await pipeline.data(for: ImageRequest(url: url, headers: request))
            reused = server.requestCount("/r") == 1
            #expect(second.statusCode == status && second.data == first.data)
            #expect(reused == (second.source == .disk))
        }
        return reused
    }

    // MARK: Stored fields and Age (RFC 9111 §3.1, §3.2, §5.1)

    @Test("a stored answer keeps every end-to-end field, not the connection's own, and says its Age")
    func storedFields() async throws {
        try await withOrigin { server, pipeline, url in
            let custom = HTTPField.Name("X-Custom")!
            origin.set {
                $0.headers = [
                    .cacheControl: "max-age=600", .contentDisposition: "attachment; filename=\"a.bin\"",
                    HTTPField.Name("Link")!: "</a.css>; rel=preload", .accessControlAllowOrigin: "*", custom: "yes", .setCookie: "id=1",
                    .connection: "x-hop", HTTPField.Name("X-Hop")!: "gone", .keepAlive: "timeout=5", .age: "100",
                ]
            }
            _ = try await pipeline.data(for: ImageRequest(url: url))
            clock.advance(by: .seconds(30))
            let stored = try await pipeline.data(for: ImageRequest(url: url))
            #expect(stored.source == .disk && server.requestCount("/r") == 1)
            #expect(stored.headers[.contentDisposition] == "attachment; filename=\"a.bin\"" && stored.headers[.accessControlAllowOrigin] == "*")
            #expect(stored.headers[HTTPField.Name("Link")!] == "</a.css>; rel=preload" && stored.headers[custom] == "yes")
            #expect(stored.headers[.setCookie] == "id=1")
            #expect(
                !stored.headers.contains(HTTPField.Name("X-Hop")!) && !stored.headers.contains(.keepAlive) && !stored.headers.contains(.connection))
            #expect(stored.headers[values: .age] == ["130"], "100 when received, 30 since")
        }
    }

    @Test("a 304 updates the stored fields it carries and keeps the rest; the next answer shows them")
    func notModifiedUpdatesFields() async throws {
        try await withOrigin { server, pipeline, url in
            let custom = HTTPField.Name("X-Custom")!
            origin.set {
                $0.headers = [.cacheControl: "max-age=10", .eTag: "\"a\"", custom: "A", .contentType: "text/plain"]
            }
            _ = try await pipeline.data(for: ImageRequest(url: url))
            clock.advance(by: .seconds(60))
            let now = HTTPDate.format(clock.date)
            origin.set { $0.notModifiedHeaders = [.cacheControl: "max-age=600", .eTag: "\"a\"", custom: "B", .contentLength: "99", .date: now] }
            let confirmed = try await pipeline.data(for: ImageRequest(url: url))
            guard case .revalidated = confirmed.freshness else {
                Issue.record("\(confirmed.freshness)")
                return
            }
            #expect(confirmed.headers[custom] == "B" && confirmed.headers[.contentType] == "text/plain")
            #expect(confirmed.headers[.contentLength] == "16", "Content-Length describes the stored body")
            clock.advance(by: .seconds(100))
            let later = try await pipeline.data(for: ImageRequest(url: url))
            #expect(later.source == .disk && later.headers[custom] == "B" && later.headers[.age] == "100")
            #expect(server.requestCount("/r") == 2)
        }
    }

    @Test("fields Connection names, and fields no-cache=\"…\" names, are not stored; the rest is reused")
    func unstoredFields() async throws {
        try await withOrigin { server, pipeline, url in
            origin.set {
                $0.headers = [
                    .cacheControl: "max-age=600, no-cache=\"Set-Cookie, X-Token\"", .setCookie: "id=1", .xToken: "t", .contentType: "text/plain",
                ]
            }
            let first = try await pipeline.data(for: ImageRequest(url: url))
            #expect(first.headers[.setCookie] == "id=1", "the download itself is passed on whole")
            let stored = try await pipeline.data(for: ImageRequest(url: url))
            #expect(stored.source == .disk && stored.headers[.contentType] == "text/plain")
            #expect(!stored.headers.contains(.setCookie) && !stored.headers.contains(.xToken))
        }
    }

    @Test("a gzip body is stored inflated, without the Content-Encoding and Content-Length it was sent with")
    func inflatedBody() async throws {
        try await withOrigin { _, pipeline, url in
            let text = Data(String(repeating: "abc ", count: 500).utf8)
            let compressed = try gzipped(text)
            origin.set {
                $0.headers = [.cacheControl: "max-age=600", .contentEncoding: "gzip", .contentType: "text/plain"]
                $0.body = compressed
            }
            let first = try await pipeline.data(for: ImageRequest(url: url))
            let stored = try await pipeline.data(for: ImageRequest(url: url))
            for response in [first, stored] {
                #expect(response.data == text && !response.headers.contains(.contentEncoding) && !response.headers.contains(.contentLength))
            }
            #expect(stored.source == .disk)
        }
    }

    // MARK: Statuses (RFC 9110 §15.1, RFC 9111 §3, §4.2.2)

    @Test(
        "every final status is answered with its body and fields, and stored with explicit freshness",
        arguments: [
            203, 204, 300, 301, 302, 303, 307, 308, 400, 404, 405, 410, 414, 500, 501, 502, 503, 504, 599,
        ])
    func statusesWithExplicitFreshness(status: Int) async throws {
        #expect(try await reused([.cacheControl: "max-age=600", .location: "/elsewhere"], status: status))
    }

    @Test(
        "a status RFC 9110 lets a cache give a heuristic lifetime is stored on Last-Modified alone; the others are not",
        arguments: [
            (200, true), (203, true), (204, true), (300, true), (301, true), (308, true), (404, true), (405, true), (410, true), (414, true),
            (501, true), (302, false), (307, false), (400, false), (403, false), (500, false),
        ])
    func heuristicStatuses(status: Int, cacheable: Bool) async throws {
        let lastModified = HTTPDate.format(clock.date.addingTimeInterval(-100 * 86_400))
        #expect(try await reused([.lastModified: lastModified, .date: HTTPDate.format(clock.date)], status: status) == cacheable)
    }

    @Test("a stale answer of any status is not reused")
    func staleStatuses() async throws {
        #expect(try await !reused([.cacheControl: "max-age=5"], status: 404))
        #expect(try await !reused([.cacheControl: "max-age=5"], status: 301))
    }

    @Test("an error page keeps its body and fields; the image path fails with the status, from disk without the network when stored")
    func errorPages() async throws {
        try await withOrigin { server, pipeline, url in
            origin.set {
                $0.status = 404
                $0.headers = [.cacheControl: "max-age=600", .contentType: "text/html"]
                $0.body = Data("<h1>not here</h1>".utf8)
            }
            let page = try await pipeline.data(for: ImageRequest(url: url))
            #expect(page.statusCode == 404 && page.data == Data("<h1>not here</h1>".utf8) && page.headers[.contentType] == "text/html")
            let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: url) }
            guard case .httpStatus(404, url)? = error else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(server.requestCount("/r") == 1, "the stored 404 answered the image request")
        }
    }

    @Test("the image path decodes a 2xx with a whole body (a 201 too) and fails on 204 and on a 206 as those statuses", arguments: [201, 204, 206])
    func imageStatuses(status: Int) async throws {
        try await withOrigin { _, pipeline, url in
            origin.set {
                $0.status = status
                $0.body = VersionedImage.body(version: 1)
            }
            if status == 201 {
                let decoded = try await pipeline.image(for: url)
                #expect(decoded.image.width == 41)
                return
            }
            let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: url) }
            guard case .httpStatus(status, url)? = error else {
                Issue.record("\(String(describing: error))")
                return
            }
        }
    }

    @Test("must-understand: no-store is set aside for a status this cache knows, not for one it does not")
    func mustUnderstand() async throws {
        #expect(try await reused([.cacheControl: "max-age=3600, no-store, must-understand"], status: 200))
        #expect(try await !reused([.cacheControl: "max-age=3600, no-store, must-understand"], status: 599))
        #expect(try await !reused([.cacheControl: "max-age=3600, No-StOrE"], status: 200))
    }

    // MARK: Parsing (RFC 9111 §1.2.2, §5.1, §5.2, §5.3; browsers)

    @Test(
        "Age as browsers read it: the first value of the first line; invalid ones ignored",
        arguments: [
            ("abc", true), ("-7200", true), ("7200.0", true), ("7200, 0", false), ("0, 7200", true), ("2147483648", false),
            ("2147483649", false), ("0, 0", true),
        ])
    func ageParsing(age: String, fresh: Bool) async throws {
        #expect(try await reused([.cacheControl: "max-age=3600", .age: age], after: 1) == fresh)
    }

    @Test("two Age lines: the first counts")
    func twoAgeLines() async throws {
        let old = HTTPFields([
            HTTPField(name: .cacheControl, value: "max-age=3600"), HTTPField(name: .age, value: "7200"), HTTPField(name: .age, value: "0"),
        ])
        let young = HTTPFields([
            HTTPField(name: .cacheControl, value: "max-age=3600"), HTTPField(name: .age, value: "0"), HTTPField(name: .age, value: "7200"),
        ])
        #expect(try await !reused(old, after: 1))
        #expect(try await reused(young, after: 1))
    }

    @Test(
        "Expires: future dates in the forms browsers read are fresh; invalid ones are already expired",
        arguments: [
            ("Thu, 18 Aug 2050 02:01:18 GMT", true), ("Thursday, 18-Aug-50 02:01:18 GMT", true), ("Thu Aug 18 02:01:18 2050", true),
            ("THU, 18 AUG 2050 02:01:18 gMT", true), ("Tue, 19 Jan 2038 14:14:08 GMT", true), ("Thu, 18 Aug 2050 02:01:18 UTC", false),
            ("Thu, 18 Aug 50 02:01:18 GMT", false), ("Thu 18 Aug 2050 02:01:18 GMT", false), ("Thu, 18  Aug  2050 02:01:18 GMT", false),
            ("Thu, 18-Aug-2050 02:01:18 GMT", false), ("Thu, 18 Aug 2050 02.01.18 GMT", false), ("Thu, 18 Aug 2050 2:01:18 GMT", false),
            ("0", false),
        ])
    func expiresParsing(expires: String, fresh: Bool) async throws {
        #expect(try await reused([.expires: expires], after: 1) == fresh)
    }

    @Test(
        "Cache-Control as browsers read it: the first max-age, quoted forms, nothing hidden in quoted strings",
        arguments: [
            ("max-age=1800, max-age=1", true), ("max-age=1, max-age=1800", false), ("max-age=\"3600\"", true),
            ("extension=\"max-age=3600\", max-age=1", false), ("max-age=003600", true), ("max-age='3600'", false), ("max-age=3600.0", false),
            ("max-age =3600", false), ("MAX-AGE=3600", true), ("max-age=3600, no-cache", false), ("max-age=3600, private", true),
        ])
    func cacheControlParsing(cacheControl: String, fresh: Bool) async throws {
        #expect(try await reused([.cacheControl: cacheControl], after: 5) == fresh)
    }

    // MARK: Request directives (RFC 9111 §5.2.1, §5.4)

    @Test(
        "the request's max-age, min-fresh, no-cache and Pragma: no-cache send a fresh answer to the server; max-stale takes a stale one",
        arguments: [
            ("Cache-Control", "max-age=0", 10, false), ("Cache-Control", "max-age=60", 10, true), ("Cache-Control", "min-fresh=3595", 10, false),
            ("Cache-Control", "no-cache", 10, false), ("Pragma", "no-cache", 10, false), ("Pragma", "x-unknown", 10, true),
            ("Cache-Control", "max-stale=600", 3700, true), ("Cache-Control", "max-stale", 99_999, true),
            ("Cache-Control", "max-stale=10", 3700, false),
        ])
    func requestDirectives(name: String, value: String, after seconds: Int, reusedExpected: Bool) async throws {
        let field = HTTPFields([HTTPField(name: HTTPField.Name(name)!, value: value)])
        #expect(try await reused([.cacheControl: "max-age=3600"], after: seconds, request: field) == reusedExpected)
    }

    @Test("a request's no-cache revalidates with the stored validator; max-stale marks what it took as stale")
    func requestRevalidation() async throws {
        try await withOrigin { server, pipeline, url in
            origin.set { $0.headers = [.cacheControl: "max-age=3600", .eTag: "\"a\""] }
            _ = try await pipeline.data(for: ImageRequest(url: url))
            let validated = try await pipeline.data(for: ImageRequest(url: url, headers: [.cacheControl: "no-cache"]))
            guard case .revalidated = validated.freshness else {
                Issue.record("\(validated.freshness)")
                return
            }
            #expect(server.lastRequest("/r")?.headers[.ifNoneMatch] == "\"a\"")
            clock.advance(by: .seconds(4000))
            let stale = try await pipeline.data(for: ImageRequest(url: url, headers: [.cacheControl: "max-stale=1000"]))
            guard case .stale(.acceptedByRequest) = stale.freshness else {
                Issue.record("\(stale.freshness)")
                return
            }
            #expect(server.requestCount("/r") == 2)
        }
    }

    @Test("only-if-cached: a stored answer, even stale, or notCached without asking the server")
    func onlyIfCached() async throws {
        try await withOrigin { server, pipeline, url in
            let request = ImageRequest(url: url, headers: [.cacheControl: "only-if-cached"])
            for error in [
                await #expect(throws: ImagePipeline.Error.self) { try await pipeline.data(for: request) },
                await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: request) },
            ] {
                if case .notCached? = error { continue }
                Issue.record("\(String(describing: error))")
            }
            #expect(server.requestCount("/r") == 0)
            origin.set { $0.headers = [.cacheControl: "max-age=10"] }
            _ = try await pipeline.data(for: ImageRequest(url: url))
            clock.advance(by: .seconds(60))
            let stored = try await pipeline.data(for: request)
            #expect(stored.source == .disk && stored.freshness.isStale && server.requestCount("/r") == 1)
        }
    }

    // MARK: Ranges (RFC 9110 §14, RFC 9111 §3.3, §3.4)

    @Test("a caller's Range goes to the server and its 206 comes back as it came, not stored, not taken for a resume")
    func rangePassedThrough() async throws {
        try await withOrigin { server, pipeline, url in
            origin.set {
                $0.headers = [.cacheControl: "max-age=600", .eTag: "\"a\""]
                $0.honoursRanges = true
            }
            let part = try await pipeline.data(for: ImageRequest(url: url, headers: [.range: "bytes=2-5"]))
            #expect(part.statusCode == 206 && part.data == Data("2345".utf8) && part.headers[.contentRange] == "bytes 2-5/16")
            #expect(server.lastRequest("/r")?.headers[.range] == "bytes=2-5")
            let whole = try await pipeline.data(for: ImageRequest(url: url))
            #expect(whole.statusCode == 200 && whole.source == .network && whole.data.count == 16, "the part was not stored as the whole")
        }
    }

    @Test(
        "a Range on a fresh stored answer is served from its bytes: first-last, first-, suffix; 416 past the end; whole for another If-Range",
        arguments: [
            ("bytes=0-1", nil, 206, "01"), ("bytes=10-", nil, 206, "ABCDEF"), ("bytes=-1", nil, 206, "F"), ("bytes=14-99", nil, 206, "EF"),
            ("bytes=16-", nil, 416, ""), ("bytes=0-1", "\"a\"", 206, "01"), ("bytes=0-1", "\"b\"", 200, "0123456789ABCDEF"),
            ("bytes=0-1, 4-5", nil, 200, "0123456789ABCDEF"), ("items=0-1", nil, 200, "0123456789ABCDEF"),
        ])
    func rangeFromStorage(range: String, ifRange: String?, status: Int, body: String) async throws {
        try await withOrigin { server, pipeline, url in
            origin.set { $0.headers = [.cacheControl: "max-age=600", .eTag: "\"a\""] }
            _ = try await pipeline.data(for: ImageRequest(url: url))
            var fields: HTTPFields = [.range: range]
            if let ifRange { fields[.ifRange] = ifRange }
            let part = try await pipeline.data(for: ImageRequest(url: url, headers: fields))
            #expect(part.source == .disk && server.requestCount("/r") == 1)
            #expect(part.statusCode == status && part.data == Data(body.utf8))
            if status == 416 { #expect(part.headers[.contentRange] == "bytes */16") }
            if status == 206 { #expect(part.headers[.contentLength] == String(body.count)) }
        }
    }

    @Test("a Range on a stale stored answer goes to the server")
    func rangeOnStale() async throws {
        try await withOrigin { server, pipeline, url in
            origin.set {
                $0.headers = [.cacheControl: "max-age=10", .eTag: "\"a\""]
                $0.honoursRanges = true
            }
            _ = try await pipeline.data(for: ImageRequest(url: url))
            clock.advance(by: .seconds(60))
            let part = try await pipeline.data(for: ImageRequest(url: url, headers: [.range: "bytes=0-1"]))
            #expect(part.statusCode == 206 && part.source == .network && server.requestCount("/r") == 2)
        }
    }

    // MARK: Invalidation (RFC 9111 §4.4)

    @Test("a successful unsafe method invalidates the URL and its same-origin Location and Content-Location; a failed or safe one does not")
    func invalidation() async throws {
        try await withOrigin { server, pipeline, url in
            server.setRoute("/other") { [origin] in origin.respond(to: $0) }
            origin.set { $0.headers = [.cacheControl: "max-age=600"] }
            let other = server.url("/other")
            let foreign = try #require(URL(string: "http://example.invalid/r"))
            func load() async throws {
                _ = try await pipeline.data(for: ImageRequest(url: url))
                _ = try await pipeline.data(for: ImageRequest(url: other))
            }
            try await load()
            #expect(await pipeline.cache.invalidate(after: .get, to: url, response: HTTPResponse(status: .ok)).isEmpty)
            #expect(await pipeline.cache.invalidate(after: .post, to: url, response: HTTPResponse(status: .internalServerError)).isEmpty)
            try await load()
            #expect(server.requestCount("/r") == 1 && server.requestCount("/other") == 1, "nothing invalidated yet")

            let answer = HTTPResponse(status: .created, headerFields: [.location: "/other", .contentLocation: foreign.absoluteString])
            #expect(await pipeline.cache.invalidate(after: .put, to: url, response: answer) == [url, other])
            try await load()
            #expect(server.requestCount("/r") == 2 && server.requestCount("/other") == 2)
        }
    }

    // MARK: Vary (RFC 9111 §4.1, §4.3.1)

    @Test("a stored answer for other Vary values is validated with its ETag: a 304 makes it this request's, a 200 replaces it")
    func varyMismatch() async throws {
        try await withOrigin { server, pipeline, url in
            let abc = HTTPField.Name("Abc")!
            origin.set { $0.headers = [.cacheControl: "max-age=600", .eTag: "\"a\"", .vary: "Abc"] }
            _ = try await pipeline.data(for: ImageRequest(url: url, headers: [abc: "123"]))
            let other = try await pipeline.data(for: ImageRequest(url: url, headers: [abc: "456"]))
            #expect(server.lastRequest("/r")?.headers[.ifNoneMatch] == "\"a\"" && server.lastRequest("/r")?.headers[abc] == "456")
            guard case .revalidated = other.freshness else {
                Issue.record("\(other.freshness)")
                return
            }
            #expect(try await pipeline.data(for: ImageRequest(url: url, headers: [abc: "456"])).source == .disk)
            #expect(server.requestCount("/r") == 2)

            origin.set { $0.headers = [.cacheControl: "max-age=600", .vary: "Abc"] }  // no validator
            try await pipeline.cache.removeAllData()
            _ = try await pipeline.data(for: ImageRequest(url: url, headers: [abc: "123"]))
            _ = try await pipeline.data(for: ImageRequest(url: url, headers: [abc: "456"]))
            #expect(server.lastRequest("/r")?.headers.contains(.ifNoneMatch) == false, "nothing to validate with: a plain request")
        }
    }
}
