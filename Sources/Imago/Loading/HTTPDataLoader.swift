import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression

/// Loads data over HTTP(S) with AsyncHTTPClient: one client (and connection
/// pool) per loader, bounded redirects, timeouts, and a response-size limit
/// enforced before and while the body arrives. It asks for gzip or deflate
/// (never for a Range request) and inflates within the same limit. A failed
/// load carries what arrived of a 200 or 206 body
/// (``DataLoadingError/partial``) and the server's Retry-After.
///
/// ```swift
/// let loader = HTTPDataLoader(configuration: .init(maximumResponseSize: 10 << 20))
/// let pipeline = ImagePipeline(configuration: .init(dataLoader: loader))
/// // ...
/// try await loader.shutdown()
/// ```
///
/// Status codes outside 200-299 are errors, and their bodies are never read
/// beyond what the connection needs, so an error page cannot be cached. A 304
/// (the answer to a conditional request) is returned as a response.
public final class HTTPDataLoader: DataLoading {
    /// A loader with the default configuration, shared by pipelines that do
    /// not name one. It lives as long as the process and is never shut down.
    public static let shared = HTTPDataLoader()

    /// What the loader was created with.
    public let configuration: Configuration

    private let client: HTTPClient
    /// With a source guard: clients pinned to the addresses it approved.
    private let pinnedClients: PinnedClients?

    /// Creates a loader with its own HTTP client.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.clientConfiguration(configuration, dnsOverride: nil))
        pinnedClients = configuration.sourceGuard.map { _ in
            PinnedClients { Self.clientConfiguration(configuration, dnsOverride: $0) }
        }
    }

    /// The HTTP client's settings; with a DNS override (a guarded loader's
    /// pinned client) redirects come back to the loader, which checks each.
    private static func clientConfiguration(_ configuration: Configuration, dnsOverride: [String: String]?) -> HTTPClient.Configuration {
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: dnsOverride == nil ? .follow(max: configuration.maximumRedirects, allowCycles: false) : .disallow,
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
        clientConfiguration.dnsOverride = dnsOverride ?? [:]
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
        var received = ReceivedBody()
        var release: (@Sendable () -> Void)?
        defer { release?() }
        do {
            let deadline = ContinuousClock.now + configuration.requestTimeout
            guard let sourceGuard = configuration.sourceGuard, let pinnedClients else {
                let response = try await client.execute(httpRequest(url, request.headers), timeout: TimeAmount(configuration.requestTimeout))
                return try await read(response, from: url, deadline: deadline, into: &received, progress: progress)
            }
            let (response, finalURL, lease) = try await executeGuarded(request, sourceGuard, pinnedClients, deadline: deadline)
            release = lease
            return try await read(response, from: finalURL, deadline: deadline, into: &received, progress: progress)
        } catch {
            var failure = error as? DataLoadingError ?? classify(error, url: url)
            if [.network, .timedOut, .cancelled].contains(failure.code) { failure.partial = received.partial }
            throw failure
        }
    }

    private func httpRequest(_ url: URL, _ headers: [HTTPHeader]) -> HTTPClientRequest {
        var httpRequest = HTTPClientRequest(url: url.absoluteString)
        for header in headers { httpRequest.headers.add(name: header.name, value: header.value) }
        if !httpRequest.headers.contains(name: "User-Agent") {
            httpRequest.headers.add(name: "User-Agent", value: configuration.userAgent)
        }
        if !httpRequest.headers.contains(name: "Accept-Encoding") {
            // A range counts encoded bytes, which are never kept: resumed requests ask for none.
            let isRange = httpRequest.headers.contains(name: "Range")
            httpRequest.headers.add(name: "Accept-Encoding", value: isRange ? "identity" : "gzip, deflate")
        }
        return httpRequest
    }

    /// Follows redirects itself, asking the guard for every hop's address
    /// and connecting only there. Credentials are not carried to another
    /// origin. Returns the final response, its URL and the lease of the
    /// client reading it.
    private func executeGuarded(
        _ request: DataRequest, _ sourceGuard: any SourceGuard, _ pinnedClients: PinnedClients, deadline: ContinuousClock.Instant
    ) async throws -> (HTTPClientResponse, URL, @Sendable () -> Void) {
        var url = request.url
        var headers = request.headers
        var visited: Set<String> = []
        for _ in 0...max(0, configuration.maximumRedirects) {
            guard visited.insert(url.absoluteString).inserted, let host = url.host else {
                throw DataLoadingError(.tooManyRedirects, url: url)
            }
            let address = try await sourceGuard.address(for: url)
            let (client, release) = pinnedClients.lease(host: host, address: address)
            let remaining = ContinuousClock.now.duration(to: deadline)
            let response: HTTPClientResponse
            do {
                response = try await client.execute(httpRequest(url, headers), timeout: TimeAmount(max(.zero, remaining)))
            } catch {
                release()
                throw error
            }
            guard [301, 302, 303, 307, 308].contains(response.status.code),
                  let location = response.headers.first(name: "Location"),
                  let next = URL(string: location, relativeTo: url)?.absoluteURL
            else {
                return (response, url, release)
            }
            release()
            guard let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw DataLoadingError(.invalidURL, url: next)
            }
            if next.scheme != url.scheme || next.host != url.host || next.port != url.port {
                headers.removeAll { ["authorization", "cookie", "proxy-authorization"].contains($0.name.lowercased()) }
            }
            url = next
        }
        throw DataLoadingError(.tooManyRedirects, url: url)
    }

    /// What arrived of a 200 or 206 body before a failure, if it can be
    /// continued with a Range request (not content-encoded).
    private struct ReceivedBody {
        var head: DataLoadingResponse?
        /// The bytes so far, unless they went to `spill`.
        var data = Data()
        /// A body of unknown length past the spill threshold: all of it so far.
        var spill: SpillFile?
        var count = 0

        /// Appends `chunk`, first moving the body to a ``SpillFile`` in
        /// `directory` if it would grow past `threshold` (nil: never).
        mutating func append(_ chunk: ByteBuffer, spillingPast threshold: Int?, in directory: String) async throws {
            if spill == nil, let threshold, count + chunk.readableBytes > threshold {
                let file = try await SpillFile.create(in: directory)
                try await file.write(data, at: 0)
                data = Data()
                spill = file
            }
            if let spill {
                try await spill.write(chunk, at: count)
            } else {
                chunk.withUnsafeReadableBytes { bytes in
                    if let base = bytes.baseAddress { data.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
                }
            }
            count += chunk.readableBytes
        }

        func bytes() throws -> Data {
            try spill?.mapped(count: count) ?? data
        }

        var partial: DataLoadingResponse? {
            guard var head, count > 0, let bytes = try? bytes() else { return nil }
            head.data = bytes
            return head
        }
    }

    /// Reads the body. AsyncHTTPClient's deadline covers the request only up
    /// to the response head, so the body checks it too, at every chunk; a
    /// silent body is cut off by the read timeout.
    private func read(
        _ response: HTTPClientResponse,
        from url: URL,
        deadline: ContinuousClock.Instant,
        into received: inout ReceivedBody,
        progress: @Sendable (DownloadProgress) -> Void
    ) async throws -> DataLoadingResponse {
        let limit = configuration.maximumResponseSize
        let head = DataLoadingResponse(
            data: Data(),
            statusCode: Int(response.status.code),
            headers: response.headers.map { HTTPHeader($0.name, $0.value) },
            url: response.url ?? url
        )
        if response.status == .notModified {
            return head // the answer to a conditional request: no body by definition
        }
        guard (200..<300).contains(response.status.code) else {
            let retryAfter = response.headers.first(name: "Retry-After").flatMap(Self.retryAfter)
            throw DataLoadingError(.httpStatus(Int(response.status.code)), url: url, retryAfter: retryAfter)
        }
        let contentLength = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
        if let contentLength, contentLength > Int64(limit) {
            throw DataLoadingError(.responseTooLarge(limit: limit), url: url)
        }
        // Content-Length counts the encoded bytes; the body arrives inflated.
        let isEncoded = response.headers.first(name: "Content-Encoding").map { !$0.isEmpty && $0.lowercased() != "identity" } ?? false
        let expected = isEncoded ? nil : contentLength
        if !isEncoded { received.head = head }
        received.data.reserveCapacity(Int(min(expected ?? 64 << 10, Int64(limit))))
        // A body of unknown length is held in memory up to the spill threshold only.
        let spillThreshold = expected == nil ? configuration.spillThreshold : nil
        for try await chunk in response.body {
            guard received.count + chunk.readableBytes <= limit else {
                throw DataLoadingError(.responseTooLarge(limit: limit), url: url)
            }
            guard ContinuousClock.now < deadline else {
                throw DataLoadingError(.timedOut, url: url, underlying: HTTPClientError.deadlineExceeded)
            }
            try await received.append(chunk, spillingPast: spillThreshold, in: configuration.temporaryDirectory)
            progress(DownloadProgress(completed: Int64(received.count), expected: expected))
        }
        if let expected, Int64(received.count) != expected {
            throw DataLoadingError(.network, url: url, underlying: ShortBody(expected: expected, received: received.count))
        }
        var whole = head
        whole.data = try received.bytes()
        return whole
    }

    /// A Retry-After value (RFC 9110 §10.2.3): delay-seconds or an HTTP date.
    static func retryAfter(_ value: String) -> Duration? {
        let text = value.trimmingASCIISpaces()
        if let seconds = Int(text) { return .seconds(max(0, min(seconds, 1 << 31))) }
        guard let date = HTTPDate.parse(String(text)) else { return nil }
        return .milliseconds(max(0, Int(min(date.timeIntervalSinceNow, Double(1 << 31)) * 1000)))
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
        case .redirectLimitReached, .redirectCycleDetected:
            return DataLoadingError(.tooManyRedirects, url: url, underlying: error)
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
