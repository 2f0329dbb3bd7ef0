import Foundation

/// Which sources the server may fetch: http and https URLs, `local:///`
/// files when the server has a local root, `s3://bucket/key` objects when
/// it has object storage; under an allow-list of prefixes where one is
/// set; and never from an address in a refused class (loopback, private,
/// link-local, ...) unless a network was opened explicitly. The address
/// check is made on the addresses a host resolves to, before connecting,
/// for every connection and redirect (the operator's object storage
/// endpoint is trusted, and not checked).
public struct SourcePolicy: Sendable {
    /// URL prefixes sources must start with (`https://images.example.com/`);
    /// empty allows any.
    public var allowedPrefixes: [String]
    /// Networks opened despite their class (`127.0.0.2/32` for a local origin).
    public var allowedNetworks: [IPNetwork]
    /// Whether `local:///path` sources are read (the server has a local root).
    public var allowsLocalFiles: Bool
    /// Whether `s3://bucket/key` sources are fetched (the server has object storage).
    public var allowsObjectStorage: Bool
    /// What a source without a scheme is appended to (`https://media.example/`); nil refuses such sources.
    public var base: String?

    public init(
        allowedPrefixes: [String] = [], allowedNetworks: [IPNetwork] = [], allowsLocalFiles: Bool = false, allowsObjectStorage: Bool = false,
        base: String? = nil
    ) {
        self.allowedPrefixes = allowedPrefixes
        self.allowedNetworks = allowedNetworks
        self.allowsLocalFiles = allowsLocalFiles
        self.allowsObjectStorage = allowsObjectStorage
        self.base = base
    }

    /// The classes refused by default, each with the reason a refusal gives.
    static let refusedClasses: [(IPNetwork, String)] = [
        ("0.0.0.0/8", "unspecified (this network)"),
        ("127.0.0.0/8", "loopback"),
        ("10.0.0.0/8", "private (RFC 1918)"),
        ("172.16.0.0/12", "private (RFC 1918)"),
        ("192.168.0.0/16", "private (RFC 1918)"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("169.254.0.0/16", "link-local"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved or broadcast"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::ffff:0:0/96", "IPv4 mapped into IPv6"),
        ("::/96", "IPv4 compatible with IPv6"),
        ("64:ff9b::/96", "IPv4 wrapped in IPv6 (NAT64)"),
        ("64:ff9b:1::/48", "IPv4 wrapped in IPv6 (local NAT64)"),
        ("2002::/16", "IPv4 wrapped in IPv6 (6to4)"),
        ("2001::/32", "IPv4 wrapped in IPv6 (Teredo)"),
        ("fc00::/7", "private (unique local)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    ].map { (IPNetwork($0.0)!, $0.1) }

    /// Checks a source URL's form and prefix (not its address); a source
    /// without a scheme is first appended to ``base``.
    public func check(url source: String) throws(SourceRefusal) -> URL {
        let text = base.map { Self.hasScheme(source) ? source : $0 + source } ?? source
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw .badURL("not an absolute URL: \(text)")
        }
        switch scheme {
        case "http", "https":
            guard let host = url.host, !host.isEmpty else { throw .badURL("no host in \(text)") }
        case "local":
            guard allowsLocalFiles else { throw .badURL("scheme local is not allowed: the server has no local root") }
            guard url.host?.isEmpty ?? true else { throw .badURL("a local source has no host: local:///path") }
            let segments = Self.localPath(of: url).split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard !segments.isEmpty, segments.allSatisfy({ !$0.isEmpty }) else { throw .badURL("no file in \(text)") }
            guard !segments.contains(where: { $0 == "." || $0 == ".." || $0.contains("\u{0}") }) else {
                throw .notAllowed("\(text) has a . or .. segment or a NUL byte")
            }
        case "s3":
            guard allowsObjectStorage else { throw .badURL("scheme s3 is not allowed: the server has no object storage") }
            guard let bucket = url.host, !bucket.isEmpty, url.path.count > 1 else { throw .badURL("expected s3://bucket/key: \(text)") }
        default:
            throw .badURL("scheme \(scheme) is not allowed, only \(allowedSchemes)")
        }
        if !allowedPrefixes.isEmpty, !allowedPrefixes.contains(where: { text.hasPrefix($0) }) {
            throw .notAllowed("\(text) is not under an allowed source prefix")
        }
        return url
    }

    private var allowedSchemes: String {
        (["http", "https"] + (allowsLocalFiles ? ["local"] : []) + (allowsObjectStorage ? ["s3"] : [])).joined(separator: ", ")
    }

    /// Whether `text` starts with a URL scheme (`s3:`, `https:`).
    static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), let first = text.first, first.isASCII, first.isLetter else { return false }
        return text[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// A `local:///` URL's path, percent-decoded: what is read under the root.
    static func localPath(of url: URL) -> String {
        let encoded = url.path(percentEncoded: true)
        return encoded.removingPercentEncoding ?? encoded
    }

    /// Checks the addresses a host resolved to: nil when every one may be
    /// connected to, else why not (a host that resolves to any refused
    /// address is refused).
    public func refusal(for addresses: [IPAddress], host: String) -> SourceRefusal? {
        guard !addresses.isEmpty else { return .unresolvable("\(host) does not resolve") }
        for address in addresses {
            if allowedNetworks.contains(where: { $0.contains(address) }) { continue }
            if let (network, reason) = Self.refusedClasses.first(where: { $0.0.contains(address) }) {
                return .refusedAddress("\(host) resolves to \(address), \(reason) (\(network)): refused")
            }
        }
        return nil
    }
}

/// Why a source is not fetched.
public enum SourceRefusal: Error, Equatable, CustomStringConvertible {
    /// Not an http(s) URL with a host: 400.
    case badURL(String)
    /// Outside the allowed prefixes: 403.
    case notAllowed(String)
    /// Resolves to a refused address: 403.
    case refusedAddress(String)
    /// Does not resolve: 502 (the source cannot be reached).
    case unresolvable(String)

    public var description: String {
        switch self {
        case .badURL(let text), .notAllowed(let text), .refusedAddress(let text), .unresolvable(let text): text
        }
    }
}
