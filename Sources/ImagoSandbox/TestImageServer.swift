import Foundation
import Imago
import ImagoConcurrency
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 server on a loopback address with a random port, for tests, benchmarks
/// and the demo: serves routes set at run time, can delay, fail, stall,
/// truncate or reset, and counts the requests it sees.
///
/// ```swift
/// let server = try await TestImageServer.start()
/// server.setRoute("/a.jpg", .init(body: jpeg, delay: .milliseconds(50)))
/// let data = try await loader.loadData(for: DataRequest(url: server.url("/a.jpg"))) { _ in }
/// #expect(server.requestCount("/a.jpg") == 1)
/// try await server.shutdown()
/// ```
public final class TestImageServer: Sendable {
    /// Answers a request dynamically.
    public typealias Handler = @Sendable (Request) -> Response

    /// The port the server listens on.
    public let port: Int
    /// The IPv4 address it listens on.
    public let host: String

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    let routes: Routes

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, routes: Routes, host: String) {
        self.group = group
        self.channel = channel
        self.routes = routes
        self.host = host
        port = channel.localAddress?.port ?? 0
    }

    /// Starts a server on `host` (a loopback address: 127.0.0.1 unless
    /// a test needs another) with a port the system picks.
    public static func start(host: String = "127.0.0.1", threads: Int = 1) async throws -> TestImageServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let routes = Routes()
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 4096)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    routes.state.withLock { $0.connections += 1 }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(TestServerHandler(routes: routes))
                    }
                }
                .bind(host: host, port: 0)
                .get()
            return TestImageServer(group: group, channel: channel, routes: routes, host: host)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Stops listening and closes every connection, stalled ones included.
    public func shutdown() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://\(host):\(port)\(path.hasPrefix("/") ? path : "/" + path)")!
    }

    /// The connections the server has accepted since it started.
    public var connectionCount: Int { routes.state.withLock { $0.connections } }

    /// Serves `response` on `path` (the path without its query). Like an
    /// origin server, a 200 with an ETag answers a matching If-None-Match
    /// with 304 Not Modified. Paths without a route answer 404.
    public func setRoute(_ path: String, _ response: Response) {
        routes.state.withLock { $0.handlers[path] = { response.answering($0) } }
    }

    /// Answers requests on `path` with `handler`.
    public func setRoute(_ path: String, handler: @escaping Handler) {
        routes.state.withLock { $0.handlers[path] = handler }
    }

    /// The number of requests seen on `path`.
    public func requestCount(_ path: String) -> Int {
        routes.state.withLock { $0.counts[path, default: 0] }
    }

    /// The number of requests seen in all.
    public var totalRequestCount: Int {
        routes.state.withLock { $0.total }
    }

    /// The headers of the last request on `path`.
    public func lastRequest(_ path: String) -> Request? {
        routes.state.withLock { $0.lastRequests[path] }
    }

    /// Holds every response (after its delay) until ``releaseResponses()``,
    /// so that a test can act while requests are certainly in flight.
    public func holdResponses() {
        routes.state.withLock { $0.isHolding = true }
    }

    /// Sends the held responses and stops holding.
    public func releaseResponses() {
        let held = routes.state.withLock { state in
            state.isHolding = false
            defer { state.held = [] }
            return state.held
        }
        for (eventLoop, send) in held { eventLoop.execute(send) }
    }

    /// Returns once `count` requests on `path` have been seen.
    public func waitForRequests(_ path: String, count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached = routes.state.withLock { state in
                guard state.counts[path, default: 0] < count else { return true }
                state.waiters.append((path, count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}

/// The server's routes and counters, shared by its connections.
final class Routes: Sendable {
    struct State {
        var handlers: [String: TestImageServer.Handler] = [:]
        var counts: [String: Int] = [:]
        var total = 0
        var connections = 0
        var lastRequests: [String: TestImageServer.Request] = [:]
        var waiters: [(path: String, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var isHolding = false
        var held: [(any EventLoop, @Sendable () -> Void)] = []
    }

    let state = Locked(State())

    /// Records `request` and picks its response.
    func respond(to request: TestImageServer.Request) -> TestImageServer.Response {
        let path = String(request.uri.prefix { $0 != "?" })
        let (handler, reached) = state.withLock { state in
            state.counts[path, default: 0] += 1
            state.total += 1
            state.lastRequests[path] = request
            let count = state.counts[path, default: 0]
            let reached = state.waiters.filter { $0.path == path && $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.path == path && $0.count <= count }
            return (state.handlers[path], reached)
        }
        for waiter in reached { waiter.resume() }
        return handler?(request) ?? TestImageServer.Response(status: 404, body: Data("not found".utf8))
    }

    /// Runs `send` now, or keeps it for ``TestImageServer/releaseResponses()`` while responses are held.
    func sendOrHold(on eventLoop: any EventLoop, _ send: @escaping @Sendable () -> Void) {
        let sendNow = state.withLock { state in
            if state.isHolding { state.held.append((eventLoop, send)) }
            return !state.isHolding
        }
        if sendNow { send() }
    }
}
