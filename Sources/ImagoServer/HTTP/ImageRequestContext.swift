import Hummingbird
import ImagoConcurrency
import Logging

/// The request context of `imago serve`'s router: Hummingbird's own, the
/// request's id, and what the image route tells the access log.
public struct ImageRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's `X-Request-ID` when it is plain, else one made here
    /// (set by ``RequestIDMiddleware``).
    public var requestID = ""
    /// Filled in by the image route, read by ``AccessLogMiddleware``.
    public let report = ImageRequestReport()

    public init(source: Source) {
        coreContext = .init(source: source)
    }
}

/// What an image request did, for its access-log line: where its answer
/// came from, which host its source is on, and its path without the
/// signature.
public final class ImageRequestReport: Sendable {
    /// Where an image answer came from.
    public enum CacheOutcome: String, Sendable {
        /// The result cache had a fresh answer.
        case hit
        /// The source came back unchanged and the kept answer was renewed.
        case revalidated
        /// The answer was made from the source (or joined the request making it).
        case miss
    }

    public struct Fields: Sendable {
        public var cacheOutcome: CacheOutcome?
        public var sourceHost: String?
        /// The path with the signature segment replaced by `-`.
        public var unsignedPath: String?
    }

    private let fields = Locked(Fields())

    public init() {}

    /// What has been reported so far.
    public var current: Fields { fields.withLock { $0 } }

    func record(_ update: (inout Fields) -> Void) {
        fields.withLock { update(&$0) }
    }
}
