import Foundation
import ImagoConcurrency
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("HTTPDataLoader against the in-process server", .timeLimit(.minutes(10)))
struct HTTPDataLoaderTests {
    let body = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    func withServer(
        _ configuration: HTTPDataLoader.Configuration = .init(),
        _ body: (TestImageServer, HTTPDataLoader) async throws -> Void
    ) async throws {
        try await withTestServer(configuration, body)
    }

    func load(_ loader: HTTPDataLoader, _ url: URL, headers: HTTPFields = [:]) async -> Result<DataLoadingResponse, DataLoadingError> {
        do throws(DataLoadingError) {
            return .success(try await loader.loadData(for: DataRequest(url: url, headers: headers)) { _ in })
        } catch {
            return .failure(error)
        }
    }

    func code(_ result: Result<DataLoadingResponse, DataLoadingError>) -> DataLoadingError.Code? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    @Test("a 200 body arrives whole, with the response headers, and the request headers reach the server")
    func success() async throws {
        try await withServer { server, loader in
            server.setRoute("/a.jpg", .init(headers: [.eTag: "\"v1\""], body: body))
            let response = try await load(loader, server.url("/a.jpg"), headers: [.xToken: "secret"]).get()
            #expect(response.data == body)
            #expect(response.statusCode == 200)
            #expect(response.headers[.eTag] == "\"v1\"")
            #expect(server.lastRequest("/a.jpg")?.headers[.xToken] == "secret")
            #expect(server.lastRequest("/a.jpg")?.headers[.userAgent] == "Imago")
        }
    }

    @Test("every status comes back as a response with its body and fields; the pipeline decides what is an error", arguments: [204, 404, 500, 503])
    func errorStatus(status: Int) async throws {
        try await withServer { server, loader in
            let body = status == 204 ? Data() : Data("error page".utf8)
            server.setRoute("/e", .init(status: status, headers: [.xToken: "kept"], body: body))
            let response = try await load(loader, server.url("/e")).get()
            #expect(response.statusCode == status && response.data == body && response.headers[.xToken] == "kept")
        }
    }

    @Test("a redirect is followed, or with maximumRedirects 0, returned as it came; an inflated body loses Content-Encoding and Content-Length")
    func redirectsAndEncoding() async throws {
        let text = Data(String(repeating: "compressible ", count: 400).utf8)
        try await withServer(.init(maximumRedirects: 0)) { server, loader in
            server.setRoute("/moved", .redirect(to: "/target", status: 301))
            let moved = try await load(loader, server.url("/moved")).get()
            #expect(moved.statusCode == 301 && moved.headers[.location] == "/target")
            server.setRoute("/gz", .init(headers: [.contentEncoding: "gzip"], body: try gzipped(text)))
            let inflated = try await load(loader, server.url("/gz")).get()
            #expect(inflated.data == text && !inflated.headers.contains(.contentEncoding) && !inflated.headers.contains(.contentLength))
        }
        try await withServer { server, loader in
            server.setRoute("/moved", .redirect(to: "/target", status: 301))
            server.setRoute("/target", .init(body: text))
            let followed = try await load(loader, server.url("/moved")).get()
            #expect(followed.data == text)
        }
    }

    @Test(
        "a body of unknown length past the spill threshold goes to an unlinked temporary file and comes back whole; announced and small ones stay in memory"
    )
    func spill() async throws {
        let folder = TemporaryDirectory()
        let large = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try await withServer(.init(spillThreshold: 64 << 10, temporaryDirectory: folder.path)) { server, loader in
            server.setRoute("/chunked", .init(body: large, behaviour: .omitContentLength))
            let whole = try await load(loader, server.url("/chunked")).get()
            #expect(whole.data == large)
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(left.isEmpty, "the file was unlinked")
        }
        // A folder that cannot be written shows which bodies spill: only those of unknown length past the threshold.
        try await withServer(.init(spillThreshold: 64 << 10, temporaryDirectory: "/nonexistent/imago")) { server, loader in
            server.setRoute("/chunked", .init(body: large, behaviour: .omitContentLength))
            server.setRoute("/announced", .init(body: large))
            server.setRoute("/small", .init(body: large.prefix(60_000), behaviour: .omitContentLength))
            let failure = await load(loader, server.url("/chunked"))
            #expect(code(failure) == .network)
            let message = (try? failure.get()) == nil ? "\(failure)" : ""
            #expect(message.contains("mkstemp failed on /nonexistent/imago"), "\(message)")
            let announced = try await load(loader, server.url("/announced")).get()
            let small = try await load(loader, server.url("/small")).get()
            #expect(announced.data == large && small.data == large.prefix(60_000))
        }
    }

    @Test("large announced bodies come back whole from pooled memory: one held is not overwritten by the next, and one cut short is an error")
    func pooledBodies() async throws {
        let bodies = (0..<4).map { n in Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ n) }) }
        try await withServer { server, loader in
            for (n, body) in bodies.enumerated() { server.setRoute("/\(n)", .init(body: body)) }
            server.setRoute("/cut", .init(body: bodies[0], behaviour: .truncate(after: 200_000)))
            let held = try await load(loader, server.url("/0")).get()
            for n in 1..<4 {
                // Each released at once: its memory goes back and the next body may reuse it.
                #expect(try await load(loader, server.url("/\(n)")).get().data == bodies[n])
                #expect(code(await load(loader, server.url("/cut"))) == .network)
            }
            #expect(held.data == bodies[0])
        }
    }

    @Test("a body over the size limit is refused, whether announced or streamed without a length")
    func sizeLimit() async throws {
        try await withServer(.init(maximumResponseSize: 10_000)) { server, loader in
            server.setRoute("/announced", .init(body: body))
            server.setRoute("/chunked", .init(body: body, behaviour: .omitContentLength))
            server.setRoute("/small", .init(body: body.prefix(10_000), behaviour: .omitContentLength))
            #expect(code(await load(loader, server.url("/announced"))) == .responseTooLarge(limit: 10_000))
            #expect(code(await load(loader, server.url("/chunked"))) == .responseTooLarge(limit: 10_000))
            let small = try await load(loader, server.url("/small")).get()
            #expect(small.data == body.prefix(10_000))
        }
    }

    @Test("a body cut short of its Content-Length, or a reset connection, is a network error, never a short success")
    func truncatedAndReset() async throws {
        try await withServer { server, loader in
            server.setRoute("/cut", .init(body: body, behaviour: .truncate(after: 1_000)))
            server.setRoute("/reset", .init(body: body, behaviour: .reset))
            #expect(code(await load(loader, server.url("/cut"))) == .network)
            #expect(code(await load(loader, server.url("/reset"))) == .network)
        }
    }

    @Test("a stalled body is cut off by the read timeout")
    func stallTimesOut() async throws {
        try await withServer(.init(readTimeout: .milliseconds(300))) { server, loader in
            server.setRoute("/stall", .init(body: body, behaviour: .stall(after: 100)))
            #expect(code(await load(loader, server.url("/stall"))) == .timedOut)
        }
    }

    @Test("a body that drips on past the request timeout is cut off")
    func slowDrip() async throws {
        try await withServer(.init(requestTimeout: .milliseconds(300))) { server, loader in
            server.setRoute("/drip", .init(body: body, behaviour: .drip(chunkSize: 1_000, interval: .milliseconds(50))))
            // The whole drip would take seconds and end in success: a timeout proves the cut.
            #expect(code(await load(loader, server.url("/drip"))) == .timedOut)
        }
    }

    @Test("cancelling the loading task ends a stalled download with cancelled, not by a timeout")
    func cancellation() async throws {
        // Timeouts far beyond the suite's time limit: only the cancellation can end the stall.
        try await withServer(.init(readTimeout: .seconds(3600), requestTimeout: .seconds(3600))) { server, loader in
            server.setRoute("/stall", .init(body: body, behaviour: .stall(after: 100)))
            let url = server.url("/stall")
            let task = Task { await load(loader, url) }
            await server.waitForRequests("/stall", count: 1)
            task.cancel()
            #expect(code(await task.value) == .cancelled)
        }
    }

    @Test("redirects are followed up to five; a sixth or a loop fails")
    func redirects() async throws {
        try await withServer { server, loader in
            for hop in 0..<6 { server.setRoute("/r\(hop)", .redirect(to: "/r\(hop + 1)")) }
            server.setRoute("/r6", .init(body: body))
            server.setRoute("/loop-a", .redirect(to: "/loop-b"))
            server.setRoute("/loop-b", .redirect(to: "/loop-a"))
            let five = try await load(loader, server.url("/r1")).get()
            #expect(five.data == body)
            #expect(five.url == server.url("/r6"))
            #expect(code(await load(loader, server.url("/r0"))) == .tooManyRedirects)
            #expect(code(await load(loader, server.url("/loop-a"))) == .tooManyRedirects)
        }
    }

    @Test("URLs that are not http(s) with a host are invalid")
    func invalidURLs() async throws {
        try await withServer { _, loader in
            for string in ["ftp://example.com/a.jpg", "file:///etc/passwd", "http:///nohost.jpg"] {
                #expect(code(await load(loader, URL(string: string)!)) == .invalidURL, "\(string)")
            }
        }
    }

    @Test("progress is monotonic and ends at the body size")
    func progress() async throws {
        try await withServer { server, loader in
            server.setRoute("/drip", .init(body: body, behaviour: .drip(chunkSize: 8_000, interval: .milliseconds(2))))
            let seen = Locked<[DownloadProgress]>([])
            _ = try await loader.loadData(for: DataRequest(url: server.url("/drip"))) { progress in
                seen.withLock { $0.append(progress) }
            }
            let values = seen.withLock { $0 }
            #expect(values.count > 1)
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.completed <= $1.completed })
            #expect(values.last == DownloadProgress(completed: Int64(body.count), expected: Int64(body.count)))
        }
    }

    @Test("1,000 concurrent loads of one path all succeed")
    func concurrentLoads() async throws {
        // Queued in the client's pool, the last requests wait for the first
        // 999 on six connections: no timeout short enough to fire on a loaded
        // machine (ThreadSanitizer, other processes) is what this tests. The
        // connect timeout too: a connection that fails to open fails every
        // request queued for it at once (refused connections are not retried).
        let patient = HTTPDataLoader.Configuration(connectTimeout: .seconds(600), readTimeout: .seconds(600), requestTimeout: .seconds(600))
        try await withServer(patient) { server, loader in
            server.setRoute("/same", .init(body: body.prefix(2_000)))
            let url = server.url("/same")
            let successes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<1000 { group.addTask { (try? await load(loader, url).get().data.count) == 2_000 } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(successes == 1000)
            #expect(server.requestCount("/same") == 1000)
        }
    }
}
