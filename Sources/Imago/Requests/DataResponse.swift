import Foundation

/// What ``ImagePipeline/data(for:)`` returns: the answer to a request, as
/// downloaded or stored, whatever its status, its body not decoded, with its
/// fields.
///
/// ```swift
/// let response = try await pipeline.data(for: ImageRequest(url: svgURL))
/// guard response.statusCode == 200 else { return forward(response) }
/// send(response.data, contentType: response.headers[.contentType] ?? "application/octet-stream")
/// ```
public struct DataResponse: Sendable {
    /// The body.
    public var data: Data
    /// The HTTP status: 200, or what the server answered (a 404 page, a
    /// redirect when the loader follows none, a 206 for the request's own
    /// Range); 200 for bytes stored without HTTP metadata.
    public var statusCode: Int
    /// The response fields: all of them for a download; for stored bytes,
    /// all that a cache keeps (RFC 9111 §3.1: not the connection's own) and
    /// an `Age` saying how old the stored answer is; none for bytes stored
    /// without HTTP metadata.
    public var headers: HTTPFields
    /// The request it answers.
    public var request: ImageRequest
    /// `.network` for a download, `.disk` for stored bytes (a 304 included).
    public var source: ImageResponse.Source
    /// How the bytes relate to the server's current version.
    public var freshness: ImageResponse.Freshness

    /// Creates a response.
    public init(
        data: Data, statusCode: Int = 200, headers: HTTPFields, request: ImageRequest, source: ImageResponse.Source,
        freshness: ImageResponse.Freshness
    ) {
        self.data = data
        self.statusCode = statusCode
        self.headers = headers
        self.request = request
        self.source = source
        self.freshness = freshness
    }
}

extension DataResponse {
    /// How much longer the answer stays fresh at `now` (RFC 9111 §4.2): its
    /// explicit lifetime (max-age, or Expires minus Date) less its age (the
    /// larger of its Age field and the time since its Date). `nil` when it
    /// states no explicit lifetime; zero under `no-store` or `no-cache`, or
    /// once it is stale.
    public func remainingLifetime(at now: Date = Date()) -> Duration? {
        let metadata = HTTPCacheMetadata(statusCode: statusCode, responseHeaders: headers, requestHeaders: [:], requestTime: now, responseTime: now)
        // Without a heuristic, the lifetime is the explicit one, or 0 when there is none.
        let freshness = metadata.freshness(at: now, maximumHeuristicLifetime: 0)
        if freshness.cacheControl.noStore || freshness.cacheControl.noCache { return .zero }
        guard freshness.cacheControl.maxAge != nil || headers.contains(.expires) else { return nil }
        return .seconds(max(0, Int(freshness.lifetime - freshness.age)))
    }
}
