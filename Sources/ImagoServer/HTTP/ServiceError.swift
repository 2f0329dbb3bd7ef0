import HTTPTypes
import Hummingbird
import Imago
import ImagoConcurrency
import NIOCore

/// A failure with the status it is answered with: every way an image
/// request can fail becomes one of these, in this file, and Hummingbird's
/// router turns it into a plain-text answer saying what went wrong.
public struct ServiceError: HTTPResponseError, CustomStringConvertible {
    public var status: HTTPResponse.Status
    /// What the body says, one line.
    public var message: String
    /// Fields the answer carries besides the body's (Retry-After, Allow).
    public var headers: HTTPFields
    /// How long a client or a CDN may keep the answer, in seconds: errors
    /// are cached briefly, so that a burst of one bad URL costs one answer.
    public var maxAge = 0

    public init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status.code) \(message)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "text/plain; charset=utf-8"
        fields[.cacheControl] = "public, max-age=\(maxAge)"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    /// The same error, cacheable for `seconds`.
    func cacheable(for seconds: Int) -> ServiceError {
        var copy = self
        copy.maxAge = seconds
        return copy
    }
}

extension ServiceError: CoalescingFailure {
    /// 400: the URL's path or options do not parse.
    init(_ error: PathError) { self.init(.badRequest, error.description) }

    /// 400 for an option that is unknown or out of bounds, 404 for a URL
    /// past its `expires` (as imgproxy answers), 403 for a source limit
    /// URLs may not set.
    init(_ error: OptionError) {
        switch error.kind {
        case .invalid: self.init(.badRequest, error.description)
        case .expired: self.init(.notFound, error.description)
        case .forbidden: self.init(.forbidden, error.description)
        }
    }

    /// 400 for a source that is not a URL we fetch, 403 for one the policy
    /// refuses, 502 for a host that does not resolve.
    init(_ refusal: SourceRefusal) {
        switch refusal {
        case .badURL(let text): self.init(.badRequest, "bad source: \(text)")
        case .notAllowed(let text), .refusedAddress(let text): self.init(.forbidden, "source refused: \(text)")
        case .unresolvable(let text): self.init(.badGateway, "source unreachable: \(text)")
        }
    }

    /// The status a pipeline failure is answered with: the source's own
    /// 404 or 410, 413 for what is too large, 415 for what is not an image,
    /// 422 for an image that does not decode or is refused (an SVG's
    /// entities, or more work than its limits allow), 502 and 504 for a source that
    /// fails or times out. Never 500.
    init(_ error: ImagePipeline.Error) {
        switch error {
        case .invalidRequest(_, let reason): self.init(.badRequest, "bad source: \(reason)")
        case .sourceRefused(_, let reason): self.init(.forbidden, "source refused: \(reason)")
        case .httpStatus(let code, let url) where code == 404 || code == 410:
            self.init(HTTPResponse.Status(code: code), "the source answered \(code): \(url.absoluteString)")
        case .httpStatus(let code, let url): self.init(.badGateway, "the source answered \(code): \(url.absoluteString)")
        case .network(let url, let underlying) where underlying.code == .timedOut:
            self.init(.gatewayTimeout, "the source timed out: \(url.absoluteString)")
        case .network(_, let underlying): self.init(.badGateway, "the source failed: \(underlying)")
        case .dataTooLarge(_, let limit): self.init(.contentTooLarge, "the source is larger than \(limit) bytes")
        case .decodingFailed(_, let underlying):
            switch underlying.code {
            case .unsupportedFormat: self.init(.unsupportedMediaType, "the source is not an image: \(underlying)")
            case .tooManyPixels, .tooManyFrames: self.init(.contentTooLarge, "the source is too large: \(underlying)")
            case .noSuchPage: self.init(.unprocessableContent, "the source has no such page: \(underlying)")
            case .corrupt: self.init(.unprocessableContent, "the source does not decode: \(underlying)")
            case .refused: self.init(.unprocessableContent, "the source is refused: \(underlying)")
            }
        case .processingFailed(_, let processor): self.init(.unprocessableContent, "processing failed: \(processor)")
        case .encodingFailed(_, let underlying): self.init(.unprocessableContent, "the image could not be encoded: \(underlying)")
        case .dataProviderFailed(_, let underlying): self.init(.badGateway, "the source failed: \(underlying)")
        case .notCached: self.init(.gatewayTimeout, "the source is not cached and may not be fetched")
        case .cancelled: self.init(.serviceUnavailable, "the request was cancelled")
        }
    }

    /// 429: the queue is full.
    static func queueFull(waiting: Int, transformations: Int) -> ServiceError {
        ServiceError(.tooManyRequests, "too many requests: \(waiting) waiting for \(transformations) transformations", headers: [.retryAfter: "1"])
    }

    /// 503: no turn came within the queue timeout.
    static func queueTimedOut(after timeout: Duration) -> ServiceError {
        ServiceError(.serviceUnavailable, "no transformation turn within \(timeout); try again later", headers: [.retryAfter: "1"])
    }

    /// 503 for a request that left (a waiter of shared work that was cancelled).
    package static func cancelled(key: String) -> ServiceError {
        ServiceError(.serviceUnavailable, "the request was cancelled")
    }

    /// 405 for anything but GET and HEAD.
    static let methodNotAllowed = ServiceError(.methodNotAllowed, "only GET and HEAD are served", headers: [.allow: "GET, HEAD"])
}
