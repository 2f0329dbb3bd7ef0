import Foundation

/// Where and how the service answers thumbor URLs, beside imgproxy's.
///
/// A path is read as thumbor's when its request's host is one of
/// ``hosts``, or when it starts with ``pathPrefix``, or when the server
/// takes no imgproxy URLs at all (no imgproxy key, no unsigned URLs):
/// then thumbor's URLs are at the root, and a thumbor site moves to
/// Imago by changing a host name. Otherwise the path is imgproxy's. The
/// two are never tried one after the other, so a path means one thing.
public struct ThumborDialect: Sendable {
    /// thumbor's `SECURITY_KEY`; nil accepts no signed thumbor URL.
    public var signing: ThumborSigning?
    /// Whether `/unsafe/` thumbor URLs are served (thumbor's `ALLOW_UNSAFE_URL`).
    public var allowsUnsafe: Bool
    /// The first path segment that marks thumbor URLs (`thumbor` for
    /// `/thumbor/{hmac}/300x200/…`); nil for none.
    public var pathPrefix: String?
    /// Host names (lowercase, without a port) whose every path is a thumbor URL.
    public var hosts: Set<String>
    /// What an image that is not an `http(s)` URL is relative to
    /// (`https://origin.example/images/`); nil prefixes `http://`, as
    /// thumbor's HTTP loader does.
    public var sourceBase: URL?

    /// Creates the dialect's settings.
    public init(
        signing: ThumborSigning? = nil, allowsUnsafe: Bool = false, pathPrefix: String? = "thumbor", hosts: Set<String> = [], sourceBase: URL? = nil
    ) {
        self.signing = signing
        self.allowsUnsafe = allowsUnsafe
        self.pathPrefix = pathPrefix
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.sourceBase = sourceBase
    }

    /// Whether any thumbor URL can be answered: with a key, or unsafe URLs.
    public var isEnabled: Bool { signing != nil || allowsUnsafe }

    /// The thumbor path `path` (below the routes' mount point, without its
    /// leading slash) holds for a request to `host`; nil when it is an
    /// imgproxy URL.
    func thumborPath(in path: Substring, host: String?, imgproxyEnabled: Bool) -> Substring? {
        guard isEnabled else { return nil }
        if let host, !hosts.isEmpty {
            let name = host.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
            if hosts.contains(name) { return path }
        }
        if let pathPrefix, path.hasPrefix(pathPrefix + "/") { return path.dropFirst(pathPrefix.count + 1) }
        return imgproxyEnabled ? nil : path
    }

    /// The source an image part names, read as thumbor's HTTP loader reads
    /// it: percent-decoded once; if that leaves no escapes, the characters
    /// a URL cannot hold are escaped again (so `%3F` in the path is the
    /// source's query); `http://` before it unless it starts with `http`,
    /// or, with a ``sourceBase``, the base before a relative one. nil for
    /// another scheme (`file://`) or text that does not decode.
    func sourceURL(for image: Substring) -> URL? {
        guard let decoded = String(image).removingPercentEncoding, !decoded.isEmpty else { return nil }
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~@$&()*!+=:;,?/'")
        let text = decoded.removingPercentEncoding == decoded ? decoded.addingPercentEncoding(withAllowedCharacters: allowed) ?? decoded : decoded
        let lowered = text.lowercased()
        let isAbsolute = lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
        // Another scheme (file://, ftp://) is refused, not read as a host name.
        if !isAbsolute, let separator = lowered.range(of: "://"),
            lowered[..<separator.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) })
        {
            return nil
        }
        if let sourceBase, !isAbsolute {
            return URL(string: text.drop { $0 == "/" }.description, relativeTo: sourceBase)?.absoluteURL
        }
        return URL(string: lowered.hasPrefix("http") ? text : "http://" + text)
    }
}
