import Foundation

/// An image URL's path taken apart: `/{signature}/{option}/.../{source}`,
/// the source being the unpadded base64url of the source URL, or `plain/`
/// followed by the percent-encoded URL (imgproxy's layout).
public struct ImageURLPath: Sendable, Equatable {
    /// The first segment: a signature, or `unsafe` for an unsigned URL.
    public var signature: String
    /// What the signature signs: everything after its segment, leading "/" included.
    public var signedPath: String
    /// The option segments, in order.
    public var options: [Substring]
    /// The source URL, decoded.
    public var source: String

    /// Takes `path` (as sent, still percent-encoded) apart; throws a
    /// 400-worthy error saying what is missing or malformed.
    public init(_ path: String) throws(PathError) {
        var rest = Substring(path)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        guard let slash = rest.firstIndex(of: "/") else { throw PathError("no source: expected /{signature}/{options}/{source}") }
        signature = String(rest[..<slash])
        signedPath = String(rest[slash...])
        let segments = rest[rest.index(after: slash)...].split(separator: "/", omittingEmptySubsequences: false)
        if let plain = segments.firstIndex(of: "plain") {
            options = Array(segments[..<plain])
            let encoded = segments[(plain + 1)...].joined(separator: "/")
            guard !encoded.isEmpty else { throw PathError("no source after plain/") }
            guard let decoded = encoded.removingPercentEncoding else { throw PathError("the plain source is not valid percent-encoding") }
            source = decoded
        } else {
            guard let last = segments.last, !last.isEmpty else { throw PathError("no source: expected /{signature}/{options}/{source}") }
            options = Array(segments.dropLast())
            guard let bytes = URLSigning.bytes(base64URL: last), let decoded = String(validating: bytes, as: UTF8.self) else {
                throw PathError("the source is not base64url of a URL (or plain/ followed by one)")
            }
            source = decoded
        }
        options.removeAll { $0.isEmpty }
    }
}

/// A path that is not an image URL: answered with 400.
public struct PathError: Error, Equatable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
