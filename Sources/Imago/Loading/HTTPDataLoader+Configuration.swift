import Foundation

extension HTTPDataLoader {
    /// Timeouts, limits and identity of an ``HTTPDataLoader``.
    public struct Configuration: Sendable {
        /// Establishing a connection. Default: 10 s.
        public var connectTimeout: Duration
        /// The longest silence while reading a response: a stalled body is cut
        /// off after it. Default: 30 s.
        public var readTimeout: Duration
        /// The whole request, redirects and body included. Default: 60 s. A body
        /// still arriving then is cut off at its next chunk (a silent one by
        /// the read timeout).
        public var requestTimeout: Duration
        /// Redirects followed before failing; loops fail at once. Default: 5.
        public var maximumRedirects: Int
        /// The largest body accepted, refused as soon as Content-Length or the
        /// received bytes pass it. Default: 50 MiB.
        public var maximumResponseSize: Int
        /// The most of a body of unknown length (no Content-Length, or
        /// content-encoded) held in memory: beyond it the body goes to an
        /// unlinked file in ``temporaryDirectory`` and is mapped back when
        /// whole, so a body that ends up refused at the size limit never
        /// took that much memory. Default: 1 MiB.
        public var spillThreshold: Int
        /// Where bodies past the spill threshold are written. Default: the
        /// system's temporary folder (`TMPDIR`, else /tmp).
        public var temporaryDirectory: String
        /// Connections kept per host. Default: 6.
        public var maximumConnectionsPerHost: Int
        /// Sent unless the request sets its own.
        public var userAgent: String
        /// Checks every connection's address, the redirects' included, and
        /// pins the host to it; `nil` (the default) connects wherever DNS says.
        public var sourceGuard: (any SourceGuard)?

        /// A configuration with the documented defaults, overridable by argument.
        public init(
            connectTimeout: Duration = .seconds(10),
            readTimeout: Duration = .seconds(30),
            requestTimeout: Duration = .seconds(60),
            maximumRedirects: Int = 5,
            maximumResponseSize: Int = 50 << 20,
            spillThreshold: Int = 1 << 20,
            temporaryDirectory: String = NSTemporaryDirectory(),
            maximumConnectionsPerHost: Int = 6,
            userAgent: String = "Imago",
            sourceGuard: (any SourceGuard)? = nil
        ) {
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.requestTimeout = requestTimeout
            self.maximumRedirects = maximumRedirects
            self.maximumResponseSize = maximumResponseSize
            self.spillThreshold = spillThreshold
            self.temporaryDirectory = temporaryDirectory
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.userAgent = userAgent
            self.sourceGuard = sourceGuard
        }

        /// Checks the limits: timeouts above zero, sizes and counts that can work.
        public func validate() throws(ConfigurationError) {
            for (name, timeout) in [("connect", connectTimeout), ("read", readTimeout), ("request", requestTimeout)] {
                try ConfigurationError.require(timeout > .zero, "\(name) timeout \(timeout): expected more than 0")
            }
            try ConfigurationError.require(maximumRedirects >= 0, "maximum redirects \(maximumRedirects): expected 0 or more")
            try ConfigurationError.require(maximumResponseSize > 0, "maximum response size \(maximumResponseSize) bytes: expected 1 or more")
            try ConfigurationError.require(spillThreshold >= 0, "spill threshold \(spillThreshold) bytes: expected 0 or more")
            try ConfigurationError.require(maximumConnectionsPerHost > 0, "connections per host \(maximumConnectionsPerHost): expected 1 or more")
        }
    }
}
