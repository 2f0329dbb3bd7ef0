import Foundation

/// An image URL's path taken apart as imgproxy reads it:
/// `/{signature}/{option}/.../{source}`, the options being the segments up
/// to the first without a colon, the source either `plain/` followed by
/// the percent-encoded URL (and `@ext` for the output format) or the
/// unpadded base64url of the URL (split by slashes or not, and `.ext`).
public struct ImageURLPath: Sendable, Equatable {
    /// The first segment: a signature, or `unsafe` for an unsigned URL.
    public var signature: String
    /// What the signature signs: everything after its segment, leading "/" included.
    public var signedPath: String
    /// The option segments, in order; in presets-only mode, the one
    /// segment naming the presets.
    public var options: [Substring]
    /// The option segments as one piece of text, as sent.
    public var optionsText: Substring
    /// The source URL, decoded.
    public var source: String
    /// The output format the source's `@ext` or `.ext` names, if any.
    public var sourceExtension: String?

    /// Takes `path` (as sent, still percent-encoded) apart; throws a
    /// 400-worthy error saying what is missing or malformed.
    public init(_ path: String, presetsOnly: Bool = false) throws(PathError) {
        try self.init(Substring(path), presetsOnly: presetsOnly)
    }

    /// Takes `path` apart, as ``init(_:presetsOnly:)-(String,_)`` does.
    public init(_ path: Substring, presetsOnly: Bool = false) throws(PathError) {
        var rest = path
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        guard let slash = rest.firstIndex(of: "/") else { throw PathError("no source: expected /{signature}/{options}/{source}") }
        signature = String(rest[..<slash])
        signedPath = String(rest[slash...])
        let segments = rest[rest.index(after: slash)...].pieces(separatedBy: "/")
        let sourceStart = presetsOnly ? min(1, segments.count) : segments.firstIndex { !$0.utf8.contains(UInt8(ascii: ":")) } ?? segments.count
        let optionSegments = Array(segments[..<sourceStart])
        options = optionSegments
        optionsText = optionSegments.first.map { rest[$0.startIndex..<optionSegments[optionSegments.count - 1].endIndex] } ?? ""
        let parts = segments[sourceStart...]
        guard let first = parts.first, !(parts.count == 1 && first.isEmpty) else {
            throw PathError("no source: expected /{signature}/{options}/{source}")
        }
        if first == "plain", parts.count > 1 {
            // Everything after "plain/", slashes included.
            let pieces = rest[rest.utf8.index(after: first.endIndex)...].pieces(separatedBy: "@")
            guard pieces.count <= 2 else { throw PathError("more than one @ in the plain source (a literal @ is written %40)") }
            guard !pieces[0].isEmpty else { throw PathError("no source after plain/") }
            guard let decoded = Self.percentDecoded(String(pieces[0])) else { throw PathError("the plain source is not valid percent-encoding") }
            source = decoded
            sourceExtension = pieces.count == 2 && !pieces[1].isEmpty ? String(pieces[1]) : nil
        } else {
            let encoded = parts.count == 1 ? first : Substring(parts.joined())
            let pieces = encoded.pieces(separatedBy: ".")
            guard pieces.count <= 2 else { throw PathError("more than one . in the base64url source") }
            guard !pieces[0].isEmpty else { throw PathError("no source: expected /{signature}/{options}/{source}") }
            guard let bytes = URLSigning.bytes(base64URL: pieces[0]), let decoded = String(validating: bytes, as: UTF8.self) else {
                throw PathError("the source is not base64url of a URL (or plain/ followed by one)")
            }
            source = decoded
            sourceExtension = pieces.count == 2 && !pieces[1].isEmpty ? String(pieces[1]) : nil
        }
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

extension Substring {
    /// The pieces between each `separator` (an ASCII character), empty ones
    /// kept: split as bytes, since splitting by Character (grapheme
    /// clusters) is slow on every request.
    func pieces(separatedBy separator: Unicode.Scalar) -> [Substring] {
        utf8.split(separator: UInt8(separator.value), omittingEmptySubsequences: false).map { Substring($0) }
    }
}
