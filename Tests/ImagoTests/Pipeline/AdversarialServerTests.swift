import Foundation
import ImagoSandbox
import Testing

@testable import Imago

/// One way a server can misbehave, and the error it must give.
struct Misbehaviour: Sendable, CustomTestStringConvertible {
    enum Expected: Sendable {
        case timedOut, network, tooManyRedirects, tooLarge
        case decodingFailed(saying: String)
    }

    var name: String
    var path = "/bad.png"
    var response: @Sendable () throws -> TestImageServer.Response
    var expected: Expected
    /// Ten minutes unless the case is about a timeout: a misbehaviour that
    /// ends in an error of its own must reach it however slowly a loaded
    /// machine (ThreadSanitizer, parallel tests) serves or reads it.
    var requestTimeout: Duration = .seconds(600)
    /// Ten minutes unless the case is about a timeout, for the same reason:
    /// AsyncHTTPClient's read timeout also runs while a starved consumer is
    /// not asking for more.
    var readTimeout: Duration = .seconds(600)

    var testDescription: String { name }
}

@Suite("Adversarial servers: every misbehaviour is a typed error within its timeout, and nothing is cached", .timeLimit(.minutes(10)))
struct AdversarialServerTests {
    let folder = TemporaryDirectory()

    /// A PNG of about 60 KB: big enough to cut in half.
    static let png: Data = {
        var canvas = Canvas(width: 256, height: 256, background: (0, 0, 0))
        var generator = SeededGenerator(seed: 9)
        for _ in 0..<300 {
            let color = (UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator), UInt8(0))
            canvas.fillCircle(
                centerX: Int.random(in: 0..<256, using: &generator), centerY: Int.random(in: 0..<256, using: &generator),
                radius: Int.random(in: 2...20, using: &generator), color: color)
        }
        return (try? PNGEncoder().encode(canvas.image!)) ?? Data()
    }()

    static let limit = 1 << 20

    static let misbehaviours: [Misbehaviour] = [
        Misbehaviour(
            name: "a body dripping past the total timeout",
            response: { .init(body: Data(count: 100 << 10), behaviour: .drip(chunkSize: 512, interval: .milliseconds(50))) },
            expected: .timedOut, requestTimeout: .seconds(2)),
        Misbehaviour(
            name: "a body that stalls", response: { .init(body: png, behaviour: .stall(after: 100)) },
            expected: .timedOut, readTimeout: .seconds(1)),
        Misbehaviour(
            name: "a response head that never comes", response: { .init(body: png, delay: .seconds(30)) },
            expected: .timedOut, readTimeout: .seconds(1)),
        Misbehaviour(
            name: "a reset mid-body (Content-Length longer than what is sent)",
            response: { .init(body: png, behaviour: .truncate(after: 1000)) }, expected: .network),
        Misbehaviour(name: "a reset before any answer", response: { .init(behaviour: .reset) }, expected: .network),
        Misbehaviour(
            name: "a Content-Length shorter than the body",
            response: { .init(body: png, behaviour: .declaredLength(png.count / 2)) }, expected: .decodingFailed(saying: "")),
        Misbehaviour(
            name: "an HTML page with an image Content-Type",
            response: { .init(headers: [.contentType: "image/png"], body: TestImageServer.Response.htmlErrorPage.body) },
            expected: .decodingFailed(saying: "HTML")),
        Misbehaviour(name: "a 200 carrying an HTML error page", response: { .htmlErrorPage }, expected: .decodingFailed(saying: "HTML")),
        Misbehaviour(name: "random bytes labelled image/jpeg", response: { .garbage(count: 20_000) }, expected: .decodingFailed(saying: "")),
        Misbehaviour(name: "a redirect loop", path: "/loop.png", response: { .redirect(to: "/loop.png") }, expected: .tooManyRedirects),
        Misbehaviour(
            name: "a megabyte of response headers",
            response: { .init(headers: [.xPadding: String(repeating: "a", count: 1 << 20)], body: png) }, expected: .network),
        // The size limit must be what ends these, however slowly a loaded
        // machine reads: no timeout can fire while the server keeps sending.
        Misbehaviour(
            name: "an endless chunked body", response: { .init(body: Data(count: 64 << 10), behaviour: .endless) }, expected: .tooLarge),
        Misbehaviour(
            name: "a Content-Length over the limit", response: { .init(body: Data(count: limit + 1)) }, expected: .tooLarge),
        Misbehaviour(
            name: "a gzip bomb (64 MB of zeros in a few KB)",
            response: { .init(headers: [.contentEncoding: "gzip"], body: try gzipped(Data(count: 64 << 20))) }, expected: .tooLarge),
    ]

    @Test("the error is typed, names the URL, and neither cache keeps anything", arguments: misbehaviours)
    func misbehaviour(_ case: Misbehaviour) async throws {
        let configuration = HTTPDataLoader.Configuration(
            readTimeout: `case`.readTimeout, requestTimeout: `case`.requestTimeout, maximumResponseSize: Self.limit
        )
        try await withTestServer(configuration) { server, loader in
            server.setRoute(`case`.path, try `case`.response())
            let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
            defer { disk.close() }
            let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, dataCache: disk, retryPolicy: .none))
            let request = ImageRequest(url: server.url(`case`.path))
            let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: request) }
            guard let error else { return }
            #expect(error.description.contains(server.url(`case`.path).absoluteString), "\(error)")
            switch (`case`.expected, error) {
            case (.timedOut, .network(_, let underlying)): #expect(underlying.code == .timedOut, "\(error)")
            case (.network, .network(_, let underlying)): #expect(underlying.code == .network, "\(error)")
            case (.tooManyRedirects, .network(_, let underlying)): #expect(underlying.code == .tooManyRedirects, "\(error)")
            case (.tooLarge, .dataTooLarge(_, let limit)): #expect(limit == Self.limit)
            case (.decodingFailed(let saying), .decodingFailed): #expect(saying.isEmpty || error.description.contains(saying), "\(error)")
            default: Issue.record("expected \(`case`.expected), got \(error.description)")
            }
            #expect(disk.count == 0 && pipeline.cache[request] == nil)
        }
    }

    @Test("a gzip- or deflate-encoded image is asked for, inflated, decoded, and stored inflated", arguments: ["gzip", "deflate"])
    func encodedBody(coding: String) async throws {
        try await withTestServer { server, loader in
            let body = coding == "gzip" ? try gzipped(Self.png) : zlibStored(Self.png)
            server.setRoute("/zipped.png", .init(headers: [.contentEncoding: coding, .cacheControl: "max-age=60"], body: body))
            let disk = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
            defer { disk.close() }
            let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, dataCache: disk))
            let response = try await pipeline.image(for: server.url("/zipped.png"))
            #expect(response.image.width == 256 && response.dataCount == Self.png.count)
            #expect(server.lastRequest("/zipped.png")?.headers[.acceptEncoding]?.contains(coding) == true)
            #expect(disk.cachedData(forKey: server.url("/zipped.png").absoluteString)?.data == Self.png)
        }
    }
}
