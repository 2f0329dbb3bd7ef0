import Foundation
import HTTPTypes

/// The URLs under a prefix: the same scheme, host and port, and a path
/// (query included) that starts with the prefix's. Compared as parsed
/// parts, never as text, so `https://api.example@evil.example/` or
/// `https://api.example.evil.example/` is not under
/// `https://api.example`.
///
/// ```swift
/// let prefix = URLPrefix("https://media.example/private/")!
/// prefix.contains(URL(string: "https://media.example/private/a.jpg")!) // true
/// prefix.contains(URL(string: "https://media.example/public/a.jpg")!)  // false
/// ```
public struct URLPrefix: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lowercased.
    public let scheme: String
    /// The host, lowercased.
    public let host: String
    /// The port, the scheme's default when the prefix names none.
    public let port: Int
    /// The start of the path, percent-encoded, at least `/`.
    public let path: String

    /// The prefix `text` names: an http(s) URL with a host and no user
    /// name or password; `nil` for anything else.
    public init?(_ text: String) {
        guard let url = URL(string: text), let parts = Self.parts(of: url) else { return nil }
        (scheme, host, port, path) = parts
    }

    /// Every URL of `url`'s origin (scheme, host and port), whatever its path.
    public init?(origin url: URL) {
        guard let parts = Self.parts(of: url) else { return nil }
        (scheme, host, port, path) = (parts.scheme, parts.host, parts.port, "/")
    }

    /// Whether `url` is under the prefix. Dot segments are resolved first,
    /// so `/private/../other` is not under `/private/`.
    public func contains(_ url: URL) -> Bool {
        guard let parts = Self.parts(of: url.standardized) else { return false }
        return parts.scheme == scheme && parts.host == host && parts.port == port && parts.path.hasPrefix(path)
    }

    public var description: String { "\(scheme)://\(host):\(port)\(path)" }

    private static func parts(of url: URL) -> (scheme: String, host: String, port: Int, path: String)? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host?.lowercased(), !host.isEmpty,
            components.user == nil, components.password == nil
        else { return nil }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let query = components.percentEncodedQuery.map { "?" + $0 } ?? ""
        return (scheme, host, components.port ?? (scheme == "https" ? 443 : 80), path + query)
    }
}

/// Request fields that go only to URLs under a prefix: an origin's API key,
/// a token, a client's cookie. A loader that follows redirects checks
/// every hop, so a redirect to another host never carries them, and a
/// chain that comes back under the prefix carries them again.
public struct ScopedFields: Sendable, Hashable {
    /// Where the fields go.
    public var prefix: URLPrefix
    /// The fields; each name replaces the request's own fields of that name.
    public var fields: HTTPFields

    /// Fields for the URLs under `prefix`.
    public init(prefix: URLPrefix, fields: HTTPFields) {
        self.prefix = prefix
        self.fields = fields
    }
}

extension HTTPFields {
    /// These fields with those of `scoped` whose prefix holds `url`, each
    /// name of theirs replacing the same name's values here.
    func adding(_ scoped: [ScopedFields], for url: URL) -> HTTPFields {
        guard !scoped.isEmpty else { return self }
        var fields = self
        for entry in scoped where entry.prefix.contains(url) {
            var named: Set<HTTPField.Name> = []
            for field in entry.fields where named.insert(field.name).inserted {
                fields[values: field.name] = entry.fields[values: field.name]
            }
        }
        return fields
    }
}
