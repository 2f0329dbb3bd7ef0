import Foundation

/// What ``ImagePipeline/data(for:)`` returns: the bytes of a request, as
/// downloaded or stored, not decoded, with the response fields that came
/// with them.
///
/// ```swift
/// let response = try await pipeline.data(for: ImageRequest(url: svgURL))
/// send(response.data, contentType: response.headers[.contentType] ?? "application/octet-stream")
/// ```
public struct DataResponse: Sendable {
    /// The body.
    public var data: Data
    /// The response fields: all of them for a download; for stored bytes,
    /// the ones the disk cache keeps (Content-Type, Cache-Control, Date, Age,
    /// Expires, ETag, Last-Modified, Vary), none for bytes stored without
    /// HTTP metadata.
    public var headers: HTTPFields
    /// The request it answers.
    public var request: ImageRequest
    /// `.network` for a download, `.disk` for stored bytes (a 304 included).
    public var source: ImageResponse.Source
    /// How the bytes relate to the server's current version.
    public var freshness: ImageResponse.Freshness

    /// Creates a response.
    public init(data: Data, headers: HTTPFields, request: ImageRequest, source: ImageResponse.Source, freshness: ImageResponse.Freshness) {
        self.data = data
        self.headers = headers
        self.request = request
        self.source = source
        self.freshness = freshness
    }
}
