import Foundation

/// Fetches the bytes of an image from wherever they live (usually HTTP).
///
/// The pipeline calls a loader once per distinct download, however many
/// requests wait for it, and cancels the calling task when every waiter has
/// gone. Implementations must stop promptly on task cancellation and throw
/// ``DataLoadingError`` with code ``DataLoadingError/Code/cancelled``.
///
/// Return every final response, whatever its status, with its body: the
/// pipeline retries temporary statuses (503, 429, ...), stores the statuses
/// HTTP lets a cache store, answers ``ImagePipeline/data(for:)`` with them,
/// and fails an image for anything but a 2xx with a whole body. A 304 Not Modified
/// (to the pipeline's conditional requests) has an empty body. A loader may
/// also throw ``DataLoadingError/Code/httpStatus(_:)``; then no body or
/// fields reach the caller.
public protocol DataLoading: Sendable {
    /// Loads the body of `request`, reporting progress as bytes arrive.
    func loadData(
        for request: DataRequest,
        progress: @escaping @Sendable (DownloadProgress) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse
}

/// One download: a URL and the HTTP fields to send with it.
public struct DataRequest: Sendable, Hashable {
    /// The URL to load.
    public var url: URL
    /// Extra request fields, in order, sent on every hop of a redirect
    /// chain but for `Authorization`, `Cookie` and `Proxy-Authorization`,
    /// which stop at the first hop to another origin.
    public var headers: HTTPFields
    /// Fields sent only to the URLs under their prefix, checked again at
    /// every redirect hop.
    public var scopedHeaders: [ScopedFields]

    /// Creates a data request.
    public init(url: URL, headers: HTTPFields = [:], scopedHeaders: [ScopedFields] = []) {
        self.url = url
        self.headers = headers
        self.scopedHeaders = scopedHeaders
    }
}

/// A successful download.
public struct DataLoadingResponse: Sendable {
    /// The body.
    public var data: Data
    /// The HTTP status code: any final status (304 for a conditional request, 206 for a range).
    public var statusCode: Int
    /// The response fields, in order.
    public var headers: HTTPFields
    /// The URL the body came from, after redirects.
    public var url: URL

    /// Creates a response.
    public init(data: Data, statusCode: Int = 200, headers: HTTPFields = [:], url: URL) {
        self.data = data
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
    }
}

/// How far a download has come.
public struct DownloadProgress: Sendable, Equatable {
    /// Bytes received so far.
    public var completed: Int64
    /// The size announced by Content-Length, if any.
    public var expected: Int64?

    /// Creates a progress value.
    public init(completed: Int64, expected: Int64?) {
        self.completed = completed
        self.expected = expected
    }

    /// The fraction done, from 0 to 1, or `nil` when the size is unknown.
    public var fraction: Double? {
        guard let expected, expected > 0 else { return nil }
        return min(1, Double(completed) / Double(expected))
    }
}

/// Why a download failed.
public struct DataLoadingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The URL cannot be loaded (no host, unsupported scheme).
        case invalidURL
        /// The server answered with this status where a successful one was needed.
        case httpStatus(Int)
        /// The body is larger than the loader's response-size limit.
        case responseTooLarge(limit: Int)
        /// More redirects than allowed, or a redirect loop.
        case tooManyRedirects
        /// A connect, read or total timeout passed.
        case timedOut
        /// The connection failed, reset or ended before the body was complete.
        case network
        /// The task was cancelled.
        case cancelled
        /// The loader's ``SourceGuard`` refused the URL or its address, and
        /// no connection was attempted; the text says why.
        case refused(String)
    }

    /// What went wrong.
    public var code: Code
    /// The URL that was being loaded.
    public var url: URL
    /// The error the HTTP stack reported, if any.
    public var underlying: (any Error)?
    /// How long the server asked the client to wait before trying again
    /// (Retry-After on a 429 or 503), if it said.
    public var retryAfter: Duration?
    /// What arrived of the body before a network failure, timeout or
    /// cancellation, with the response's status and headers: the pipeline
    /// continues from there with a Range request.
    public var partial: DataLoadingResponse?

    /// Creates a loading error.
    public init(_ code: Code, url: URL, underlying: (any Error)? = nil, retryAfter: Duration? = nil) {
        self.code = code
        self.url = url
        self.underlying = underlying
        self.retryAfter = retryAfter
    }

    /// Whether trying again later may succeed: a timeout, a failed or reset
    /// connection, or a status that says "not now" (408, 429, 500, 502, 503,
    /// 504). Everything else (404, an invalid URL, a body over the limit,
    /// too many redirects, cancellation) fails the same way again.
    public var isTemporary: Bool {
        switch code {
        case .timedOut, .network: true
        case .httpStatus(let status): Self.temporaryStatuses.contains(status)
        case .invalidURL, .responseTooLarge, .tooManyRedirects, .cancelled, .refused: false
        }
    }

    static let temporaryStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    public var description: String {
        let what: String
        switch code {
        case .invalidURL: what = "invalid URL"
        case .httpStatus(let status): what = "HTTP status \(status)"
        case .responseTooLarge(let limit): what = "response larger than the limit of \(limit) bytes"
        case .tooManyRedirects: what = "too many redirects"
        case .timedOut: what = "timed out"
        case .network: what = "network error"
        case .cancelled: what = "cancelled"
        case .refused(let reason): what = "refused (\(reason))"
        }
        if let underlying { return "\(what) loading \(url.absoluteString): \(underlying)" }
        return "\(what) loading \(url.absoluteString)"
    }
}
