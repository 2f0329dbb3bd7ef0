import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import Tracing

/// Loads data over HTTP(S) with AsyncHTTPClient: one client (and connection
/// pool) per loader, bounded redirects, timeouts, and a response-size limit
/// enforced before and while the body arrives. It asks for gzip or deflate
/// (never for a Range request) and inflates within the same limit; an
/// inflated body comes without the Content-Encoding and Content-Length that
/// described it as sent. A failed load carries what arrived of a 200 or 206
/// body (``DataLoadingError/partial``).
///
/// ```swift
/// let loader = HTTPDataLoader(configuration: .init(maximumResponseSize: 10 << 20))
/// let pipeline = ImagePipeline(configuration: .init(dataLoader: loader))
/// // ...
/// try await loader.shutdown()
/// ```
///
/// Every final response is returned, whatever its status, with its body
/// (a 404 page, a 503's Retry-After): the pipeline decides what is an error.
/// With ``Configuration/maximumRedirects`` at 0 a redirect is returned too.
public final class HTTPDataLoader: DataLoading {
    /// A loader with the default configuration, shared by pipelines that do
    /// not name one. It lives as long as the process and is never shut down.
    public static let shared = HTTPDataLoader()

    /// What the loader was created with.
    public let configuration: Configuration

    private let client: HTTPClient
    /// With a source guard: clients pinned to the addresses it approved.
    private let pinnedClients: PinnedClients?
    /// The threads that write bodies spilled to disk; stopped with the loader.
    private let spillThreads: PriorityThreadPool

    /// Creates a loader with its own HTTP client, and two threads of its
    /// own for bodies spilled to disk.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, spillThreads: PriorityThreadPool(threads: 2, name: "imago-spill"))
    }

    /// Creates a loader whose spilled bodies are written on `spillThreads`
    /// (an owner's blocking-I/O threads, shared with its other components).
    package init(configuration: Configuration, spillThreads: PriorityThreadPool) {
        self.configuration = configuration
        self.spillThreads = spillThreads
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.clientConfiguration(configuration, dnsOverride: [:]))
        pinnedClients = configuration.sourceGuard.map { _ in
            PinnedClients { Self.clientConfiguration(configuration, dnsOverride: $0) }
        }
    }

    /// The HTTP client's settings: redirects come back to the loader, which
    /// follows them itself; a guarded loader's pinned clients override DNS.
    private static func clientConfiguration(_ configuration: Configuration, dnsOverride: [String: String]) -> HTTPClient.Configuration {
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(configuration.connectTimeout), read: TimeAmount(configuration.readTimeout)),
            // The limit applies to the inflated size: a small gzip body that
            // inflates past the response-size limit is refused as it inflates.
            decompression: .enabled(limit: .size(configuration.maximumResponseSize))
        )
        clientConfiguration.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maximumConnectionsPerHost
        )
        // A refused connection is an answer: fail the attempt at once and let
        // the pipeline's RetryPolicy decide, instead of the client trying again
        // until its connect timeout (10 s a request, 30 s with 3 attempts).
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        clientConfiguration.dnsOverride = dnsOverride
        // The client's own spans start on its event loop, outside the
        // caller's trace (roots of their own, one a request): the caller's
        // trace is passed on in the request's fields instead (httpRequest).
        clientConfiguration.tracing.tracer = nil
        return clientConfiguration
    }

    deinit {
        // The client keeps itself alive until its shutdown completes; a second
        // shutdown (after an explicit one) only reports that it was done.
        client.shutdown { _ in }
    }

    /// Closes the loader's connections. Loads started afterwards fail.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    public func loadData(
        for request: DataRequest,
        progress: @escaping @Sendable (DownloadProgress) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        let url = request.url
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host?.isEmpty == false else {
            throw DataLoadingError(.invalidURL, url: url)
        }
        // The whole request, body included, redirects included.
        let deadline = NIODeadline.now() + TimeAmount(configuration.requestTimeout)
        var collector: ResponseCollector?
        do {
            // The loader follows redirects itself, so that each hop gets its
            // own fields (scoped ones only under their prefix, credentials
            // only on the first origin) and, guarded, connects only to the
            // address the guard approved for it.
            var hop = url
            var carried = request.headers
            var visited: Set<String> = []
            for redirects in 0...max(0, configuration.maximumRedirects) {
                guard visited.insert(hop.absoluteString).inserted, let host = hop.host else {
                    throw DataLoadingError(.tooManyRedirects, url: hop)
                }
                let received = ResponseCollector(url: hop, configuration: configuration, spillThreads: spillThreads, progress: progress)
                collector = received
                let sent = try httpRequest(hop, carried.adding(request.scopedHeaders, for: hop))
                if let sourceGuard = configuration.sourceGuard, let pinnedClients {
                    let address = try await sourceGuard.address(for: hop)
                    let (pinned, release) = pinnedClients.lease(host: host, address: address)
                    defer { release() }
                    try await run(pinned, sent, into: received, deadline: deadline)
                } else {
                    try await run(client, sent, into: received, deadline: deadline)
                }
                // Without redirects to follow, a redirect is the answer.
                guard configuration.maximumRedirects > 0, let next = try redirect(from: received) else { return try answer(from: received) }
                guard redirects < configuration.maximumRedirects else { break }
                if URLPrefix(origin: next) != URLPrefix(origin: hop) {
                    carried.removeAll { [.authorization, .cookie, .proxyAuthorization].contains($0.name) }
                }
                hop = next
            }
            throw DataLoadingError(.tooManyRedirects, url: hop)
        } catch {
            var failure = error as? DataLoadingError ?? classify(error, url: url)
            if [.network, .timedOut, .cancelled].contains(failure.code) { failure.partial = collector?.partial }
            throw failure
        }
    }

    private func httpRequest(_ url: URL, _ headers: HTTPFields) throws -> HTTPClient.Request {
        var fields = HTTPHeaders(headers)
        if !fields.contains(name: "User-Agent") {
            fields.add(name: "User-Agent", value: configuration.userAgent)
        }
        if !fields.contains(name: "Accept-Encoding") {
            // A range counts encoded bytes, which are never kept: resumed requests ask for none.
            fields.add(name: "Accept-Encoding", value: fields.contains(name: "Range") ? "identity" : "gzip, deflate")
        }
        // In a trace, the source hears of it (W3C traceparent), as from any traced client.
        if let trace = ServiceContext.current { InstrumentationSystem.instrument.inject(trace, into: &fields, using: TraceFields()) }
        return try HTTPClient.Request(url: url.absoluteString, method: .GET, headers: fields)
    }

    /// Writes the fields of a trace's context into a request's.
    private struct TraceFields: Injector {
        func inject(_ value: String, forKey key: String, into fields: inout HTTPHeaders) {
            fields.replaceOrAdd(name: key, value: value)
        }
    }

    /// Runs `request` with `collector` receiving it; cancelling the calling
    /// task cancels the request.
    private func run(_ client: HTTPClient, _ request: HTTPClient.Request, into collector: ResponseCollector, deadline: NIODeadline) async throws {
        let task = client.execute(request: request, delegate: collector, deadline: deadline)
        try await withTaskCancellationHandler {
            try await task.futureResult.get()
        } onCancel: {
            task.cancel()
        }
    }

    /// The whole response, whatever its status.
    private func answer(from collector: ResponseCollector) throws -> DataLoadingResponse {
        guard let response = try collector.response() else { throw DataLoadingError(.network, url: collector.url) }
        return response
    }

    /// Where a redirect points: nil for any other answer. Only http and
    /// https are followed.
    private func redirect(from collector: ResponseCollector) throws(DataLoadingError) -> URL? {
        guard let head = collector.head, [301, 302, 303, 307, 308].contains(head.status.code),
            let location = head.headers.first(name: "Location"),
            let next = URL(string: location, relativeTo: collector.url)?.absoluteURL
        else { return nil }
        guard let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw DataLoadingError(.invalidURL, url: next)
        }
        return next
    }

    /// Sorts an HTTP stack error into a loading error code.
    func classify(_ error: any Error, url: URL) -> DataLoadingError {
        if error is CancellationError || Task.isCancelled {
            return DataLoadingError(.cancelled, url: url, underlying: error)
        }
        if let error = error as? NIOHTTPDecompression.DecompressionError, error == .limit {
            return DataLoadingError(.responseTooLarge(limit: configuration.maximumResponseSize), url: url, underlying: error)
        }
        guard let error = error as? HTTPClientError else {
            return DataLoadingError(.network, url: url, underlying: error)
        }
        switch error {
        case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
            return DataLoadingError(.timedOut, url: url, underlying: error)
        case .cancelled:
            return DataLoadingError(.cancelled, url: url, underlying: error)
        case .invalidURL, .emptyHost, .emptyScheme:
            return DataLoadingError(.invalidURL, url: url, underlying: error)
        default:
            return DataLoadingError(.network, url: url, underlying: error)
        }
    }
}

/// A body that ended before its Content-Length.
struct ShortBody: Error, CustomStringConvertible {
    var expected: Int64
    var received: Int

    var description: String { "body ended after \(received) of \(expected) bytes" }
}
