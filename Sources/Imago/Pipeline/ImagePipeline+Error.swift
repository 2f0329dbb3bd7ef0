import Foundation

extension ImagePipeline {
    /// Why a request failed: each case names the URL or key, and ``stage``
    /// says which stage failed (request, loading, decoding, processing, cache).
    public enum Error: Swift.Error, Sendable, CustomStringConvertible {
        /// The request cannot be loaded as given (no host, unsupported scheme, a bad URL string).
        case invalidRequest(key: String, reason: String)
        /// The server answered with an error status; its body is never cached.
        case httpStatus(code: Int, url: URL)
        /// The download failed: timeout, reset, too many redirects, a truncated body.
        case network(url: URL, underlying: DataLoadingError)
        /// The loader's ``SourceGuard`` refused the URL or the address it
        /// resolves to; no connection was attempted.
        case sourceRefused(url: URL, reason: String)
        /// The response is larger than the loader's size limit.
        case dataTooLarge(url: URL, limit: Int)
        /// The request's data provider threw.
        case dataProviderFailed(key: String, underlying: any Swift.Error)
        /// The data is not an image Imago can decode, or it is damaged.
        case decodingFailed(key: String, underlying: ImageDecodingError)
        /// A processor of the request returned no image.
        case processingFailed(key: String, processor: String)
        /// The image could not be encoded (``ImagePipeline/render(_:as:encodedWith:)``).
        case encodingFailed(key: String, underlying: ImageEncodingError)
        /// The request asked for cached data only and none is stored.
        case notCached(key: String)
        /// The request was cancelled before it finished.
        case cancelled(key: String)

        public var description: String {
            switch self {
            case .invalidRequest(let key, let reason):
                "invalid request \(key): \(reason)"
            case .httpStatus(let code, let url):
                "HTTP status \(code) loading \(url.absoluteString)"
            case .network(let url, let underlying):
                "network error loading \(url.absoluteString): \(underlying.code) \(underlying.underlying.map { "(\($0))" } ?? "")"
                    .trimmingCharacters(in: .whitespaces)
            case .sourceRefused(let url, let reason):
                "source \(url.absoluteString) refused: \(reason)"
            case .dataTooLarge(let url, let limit):
                "response from \(url.absoluteString) is larger than the limit of \(limit) bytes"
            case .dataProviderFailed(let key, let underlying):
                "data provider for \(key) failed: \(underlying)"
            case .decodingFailed(let key, let underlying):
                "decoding \(key) failed: \(underlying)"
            case .processingFailed(let key, let processor):
                "processing \(key) with \(processor) failed"
            case .encodingFailed(let key, let underlying):
                "encoding \(key) failed: \(underlying)"
            case .notCached(let key):
                "no cached image for \(key), and the request allows no network (cacheOnly)"
            case .cancelled(let key):
                "loading \(key) was cancelled"
            }
        }

        /// The stage that failed, as a short word for logs and metrics.
        public var stage: String {
            switch self {
            case .invalidRequest: "request"
            case .httpStatus, .network, .sourceRefused, .dataTooLarge, .dataProviderFailed: "loading"
            case .decodingFailed: "decoding"
            case .processingFailed: "processing"
            case .encodingFailed: "encoding"
            case .notCached: "cache"
            case .cancelled: "cancelled"
            }
        }

        /// Whether this is a cancellation rather than a failure.
        public var isCancellation: Bool {
            if case .cancelled = self { return true }
            return false
        }

        /// Whether trying again later may succeed (see ``DataLoadingError/isTemporary``).
        /// The pipeline retries these (``RetryPolicy``), and a stale cached
        /// copy may stand in for them; it never remembers a failed URL.
        public var isTemporary: Bool {
            switch self {
            case .network(_, let underlying): underlying.isTemporary
            case .httpStatus(let code, _): DataLoadingError.temporaryStatuses.contains(code)
            default: false
            }
        }

        init(_ error: DataLoadingError, key: String) {
            switch error.code {
            case .invalidURL: self = .invalidRequest(key: key, reason: error.description)
            case .httpStatus(let code): self = .httpStatus(code: code, url: error.url)
            case .responseTooLarge(let limit): self = .dataTooLarge(url: error.url, limit: limit)
            case .cancelled: self = .cancelled(key: key)
            case .refused(let reason): self = .sourceRefused(url: error.url, reason: reason)
            case .tooManyRedirects, .timedOut, .network: self = .network(url: error.url, underlying: error)
            }
        }
    }
}

/// A waiter that leaves shared work (a download, a decode) hears `.cancelled`.
extension ImagePipeline.Error: CoalescingFailure {}
