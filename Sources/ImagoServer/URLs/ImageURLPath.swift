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
        try self.init(Substring(path))
    }

    /// Takes `path` apart, as ``init(_:)-(String)`` does.
    public init(_ path: Substring) throws(PathError) {
        var rest = path
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        guard let slash = rest.firstIndex(of: "/") else { throw PathError("no source: expected /{signature}/{options}/{source}") }
        signature = String(rest[..<slash])
        signedPath = String(rest[slash...])
        // Split as bytes: "/" is ASCII, and splitting by Character (grapheme
        // clusters) is slow.
        let segments = rest.utf8[rest.utf8.index(after: slash)...].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { Substring($0) }
        if let plain = segments.firstIndex(of: "plain") {
            options = Array(segments[..<plain])
            // Everything after "plain/", slashes included.
            let end = segments[plain].endIndex
            let encoded = end < rest.endIndex ? String(rest[rest.utf8.index(after: end)...]) : ""
            guard !encoded.isEmpty else { throw PathError("no source after plain/") }
            guard let decoded = Self.percentDecoded(encoded) else { throw PathError("the plain source is not valid percent-encoding") }
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

    /// `text` with each `%XX` replaced by the byte it stands for; nil if a
    /// `%` is not followed by two hexadecimal digits or the bytes are not
    /// UTF-8. Foundation's `removingPercentEncoding` answers the same but
    /// for two quirks (a lone 0xA9 becomes U+FFFD, a leading byte order
    /// mark is dropped), through NSString, which is slow on Linux.
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(URLSigning.hexValue), let low = iterator.next().flatMap(URLSigning.hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// A path that is not an image URL: answered with 400.
public struct PathError: Error, Equatable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
