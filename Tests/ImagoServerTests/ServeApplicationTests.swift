import Foundation
import HummingbirdTesting
import Imago
import ImagoCaching
import ImagoCodecFixtures
import ImagoConcurrency
import ImagoSandbox
import Logging
import ServiceLifecycle
import Testing

@testable import ImagoServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite("imago serve over HTTP: HEAD, request ids, statuses on the wire")
struct ServeApplicationTests {
    @Test("a real socket: HEAD keeps the length, a plain X-Request-ID is echoed, a malformed one replaced")
    func overHTTP() async throws {
        let source = try await TestImageServer.start(host: "127.0.0.2")
        source.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 120, height: 90))))
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder)
        let (group, running, port) = try await Self.serve(service, drainTimeout: .seconds(600))
        let base = "http://127.0.0.1:\(port)"
        let path = ImageServiceTests.path("w:60/f:png", source.url("/photo.jpg"))
        let requestID = HTTPField.Name("X-Request-ID")!
        let get = try await Patient.send(ServiceRequest(path: path, headers: [requestID: "abc-123"]), to: base)
        #expect(get.status == 200)
        #expect(get.headers[requestID] == "abc-123")
        let length = try #require(get.headers[.contentLength])
        #expect(Int(length) == get.body.count)
        let head = try await Patient.send(ServiceRequest(method: .head, path: path, headers: [requestID: "bad id\u{7f}"]), to: base)
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.headers[.contentLength] == length)
        #expect(head.headers[requestID] != "bad id\u{7f}" && head.headers[requestID] != nil)
        let refused = try await Patient.send(ServiceRequest(path: "/unsafe/w:60/plain/file:///etc/passwd"), to: base)
        #expect(refused.status == 400)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("scheme file"))
        await group.triggerGracefulShutdown()
        try await running.value
        try await source.shutdown()
    }

    @Test("graceful stop: a request in flight is answered, then the server stops and the service saves the caches' snapshots")
    func gracefulStop() async throws {
        let source = try await TestImageServer.start(host: "127.0.0.2")
        source.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 120, height: 90))))
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder, sourceAdmission: .always)
        let (group, running, answer, loader) = try await Self.holdOneRequest(service, source: source, drainTimeout: .seconds(600))
        await group.triggerGracefulShutdown()
        source.releaseResponses()
        let response = try await answer.value
        #expect(response.statusCode == 200)
        #expect(ImageFormat(sniffing: response.data) == .png)
        try await running.value
        #expect(FileManager.default.fileExists(atPath: folder.appending("sources/index")))
        #expect(FileManager.default.fileExists(atPath: folder.appending("results/index")))
        try await loader.shutdown()
        try await source.shutdown()
    }

    @Test("the drain timeout: a request still running when it passes is cancelled and the server stops")
    func drainTimeout() async throws {
        let source = try await TestImageServer.start(host: "127.0.0.2")
        source.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 120, height: 90))))
        let folder = TemporaryDirectory()
        // A source timeout far beyond the drain timeout: only cancellation can end the request early.
        let service = ImageServiceTests.service(in: folder, sourceTimeout: .seconds(300))
        let (group, running, answer, loader) = try await Self.holdOneRequest(service, source: source, drainTimeout: .milliseconds(500))
        await group.triggerGracefulShutdown()
        // The source is still held: only the drain timeout can end the group.
        _ = try? await running.value
        #expect(source.requestCount("/photo.jpg") == 1)
        let outcome = await answer.result
        if case .success(let response) = outcome {
            #expect(response.statusCode == 503, "\(response.statusCode): \(String(decoding: response.data, as: UTF8.self))")
        }
        let metrics = String(decoding: await service.respond(to: ServiceRequest(path: "/metrics")).body, as: UTF8.self)
        #expect(!metrics.contains("status=\"504\""), "the request waited for the source timeout")
        source.releaseResponses()
        try await loader.shutdown()
        try await source.shutdown()
    }

    @Test("a client that sends its request head a piece at a time and stops is closed after the idle timeout; a whole request is answered")
    func slowHeaders() async throws {
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder)
        let (group, running, port) = try await Self.serve(service, drainTimeout: .seconds(10), idleTimeout: .milliseconds(300))

        let whole = await RawConnection.exchange(port: port, send: "GET /health HTTP/1.1\r\nHost: imago\r\n\r\n")
        #expect(whole.received.hasPrefix("HTTP/1.1 200"), "\(whole.received)")
        let partial = await RawConnection.exchange(port: port, send: "GET /health HTTP/1.1\r\nHo")
        #expect(partial.received.isEmpty && partial.closedByServer, "\(partial)")
        await group.triggerGracefulShutdown()
        try await running.value
    }

    @Test("readiness: /ready answers 200 until a shutdown begins, and draining is marked before the server is told to stop")
    func readiness() async throws {
        // Given a readiness run last, as imago serve runs it, and a service before it that notes what /ready said when told to stop
        struct Noting: Service {
            let readiness: Readiness
            let noted: Locked<Bool?>
            func run() async throws {
                try? await gracefulShutdown()
                noted.withLock { $0 = readiness.isReady }
            }
        }
        let readiness = Readiness()
        let noted = Locked<Bool?>(nil)
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder)
        let (group, running, port) = try await Self.serve(
            service, drainTimeout: .seconds(600), readiness: readiness, before: [Noting(readiness: readiness, noted: noted)])
        let ready = try await Patient.send(ServiceRequest(path: "/ready"), to: "http://127.0.0.1:\(port)")
        #expect(ready.status == 200 && readiness.isReady)
        // When the group is shut down
        await group.triggerGracefulShutdown()
        try await running.value
        // Then the service before it saw the server draining already, and /ready now answers 503
        #expect(noted.withLock { $0 } == false)
        let drained = ServeApplication.application(
            router: ServeApplication.router(service: service, logger: Logger(label: "test"), readiness: readiness), host: "127.0.0.1", port: 0,
            logger: Logger(label: "test"))
        try await drained.test(.router) { client in
            let ready = try await client.execute(uri: "/ready", method: .get)
            #expect(ready.status == .serviceUnavailable)
        }
    }

    /// Serves `service` on a random loopback port, run by the group `imago
    /// serve` runs it in (`before` ahead of the service and the server,
    /// `readiness` last):
    /// the group, the task running it, and the port.
    static func serve(
        _ service: ImageService, drainTimeout: Duration, idleTimeout: Duration = .seconds(30), readiness: Readiness = Readiness(),
        before: [any Service] = []
    ) async throws -> (ServiceGroup, Task<Void, any Error>, Int) {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = ServeApplication.application(
            service: service, host: "127.0.0.1", port: 0, logger: Logger(label: "test"), readiness: readiness, idleTimeout: idleTimeout
        ) { portContinuation.yield($0) }
        let group = ServeApplication.serviceGroup(
            before + [service, app, readiness], drainTimeout: drainTimeout, logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        return (group, running, port)
    }

    /// Serves `service` as ``serve(_:drainTimeout:idleTimeout:)`` does and sends it one request for `/photo.jpg` of
    /// `source`, which is held at the source until the test releases it.
    static func holdOneRequest(
        _ service: ImageService, source: TestImageServer, drainTimeout: Duration
    ) async throws -> (ServiceGroup, Task<Void, any Error>, Task<DataLoadingResponse, any Error>, HTTPDataLoader) {
        let (group, running, port) = try await serve(service, drainTimeout: drainTimeout)
        let url = URL(string: "http://127.0.0.1:\(port)" + ImageServiceTests.path("w:60/f:png", source.url("/photo.jpg")))!
        source.holdResponses()
        let loader = Patient.loader()
        let answer = Task { try await loader.loadData(for: DataRequest(url: url)) { _ in } }
        await source.waitForRequests("/photo.jpg", count: 1)
        return (group, running, answer, loader)
    }

    @Test("request ids: plain ones are kept, anything else is not; those made here are distinct and plain themselves")
    func requestIDs() {
        #expect(RequestIDMiddleware.wellFormed("A-b_c.9") == "A-b_c.9")
        for bad in ["", "a b", "a\nb", String(repeating: "x", count: 129), "é"] {
            #expect(RequestIDMiddleware.wellFormed(bad) == nil, "\(bad)")
        }
        let made = (0..<1_000).map { _ in RequestID.next() }
        #expect(Set(made).count == made.count)
        #expect(made.allSatisfy { RequestIDMiddleware.wellFormed($0) == $0 && $0.utf8.count == 25 })
    }

    @Test("the access log's milliseconds: one decimal, rounded half up")
    func milliseconds() {
        #expect(AccessLogMiddleware.milliseconds(.zero) == "0.0")
        #expect(AccessLogMiddleware.milliseconds(.microseconds(2_149)) == "2.1")
        #expect(AccessLogMiddleware.milliseconds(.microseconds(2_150)) == "2.2")
        #expect(AccessLogMiddleware.milliseconds(.seconds(3) + .microseconds(40)) == "3000.0")
        #expect(AccessLogMiddleware.milliseconds(.milliseconds(59_999) + .microseconds(999)) == "60000.0")
    }
}

/// A plain TCP client: sends bytes, then reads until the server closes the
/// connection (its blocking reads run off Swift's cooperative threads).
enum RawConnection {
    struct Outcome: Sendable {
        var received: String
        /// Whether the server closed the connection (rather than the read
        /// giving up after its one-minute hang guard).
        var closedByServer: Bool
    }

    static func exchange(port: Int, send text: String) async -> Outcome {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: exchangeBlocking(port: port, send: text)) }
        }
    }

    private static func exchangeBlocking(port: Int, send text: String) -> Outcome {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return Outcome(received: "", closedByServer: false) }
        defer { close(socket) }
        var guardTime = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &guardTime, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return Outcome(received: "", closedByServer: false) }
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            return Outcome(received: String(decoding: received, as: UTF8.self), closedByServer: count == 0 || errno == ECONNRESET)
        }
    }
}
