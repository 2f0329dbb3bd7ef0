/// The Cache-Control directives a private cache acts on (RFC 9111 §5.2 and
/// RFC 5861), in a response or a request, parsed from one or more field
/// lines as RFC 9110 §5.6 writes them: `name[=token|"quoted string"]`,
/// separated by commas outside quoted strings, names in any letter case.
///
/// The first occurrence of a directive counts (as browsers read two
/// `max-age`s). A directive with spaces around its `=` is malformed and
/// ignored, except that a `max-age` that cannot be read (`max-age =60`,
/// `3600.0`, `'3600'`, `a3600`) counts as 0, so that a broken field makes
/// a response stale rather than fresh.
package struct CacheControl: Sendable, Equatable {
    package var maxAge: Int?
    package var noStore = false
    /// Plain `no-cache`: every use needs the server's word first.
    package var noCache = false
    /// The fields named by `no-cache="a, b"`: only they need the server's
    /// word, so the cache does not keep them (RFC 9111 §5.2.2.4).
    var noCacheFields: [String] = []
    var mustRevalidate = false
    var mustUnderstand = false
    var immutable = false
    /// `public` or `private`: either lets a private cache store a response
    /// that has no other lifetime to go by.
    var isPublicOrPrivate = false
    var staleWhileRevalidate: Int?
    var staleIfError: Int?
    /// Request only: how stale a response the client accepts; `Int.max`
    /// for a bare `max-stale` (any).
    var maxStale: Int?
    /// Request only: how long the response must stay fresh.
    var minFresh: Int?
    /// Request only: answer from storage or not at all.
    var onlyIfCached = false

    package init(_ values: [String]) {
        for var value in values {
            // Parsed as ASCII bytes: this runs for every download and every disk hit.
            value.withUTF8 { bytes in
                var rest = bytes[...]
                while !rest.isEmpty { apply(Self.nextDirective(&rest)) }
            }
        }
    }

    /// The request's directives: its Cache-Control, or without one, a
    /// `Pragma: no-cache` read as `no-cache` (RFC 9111 §5.4).
    init(request headers: HTTPFields) {
        let values = headers[values: .cacheControl]
        self.init(values)
        if values.isEmpty, headers[values: .pragma].contains(where: { Self.isNoCachePragma($0) }) { noCache = true }
    }

    private static func isNoCachePragma(_ value: String) -> Bool {
        value.split(separator: ",").contains { $0.trimmingASCIISpaces().lowercased() == "no-cache" }
    }

    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    /// One directive: its name, and its argument without the quotes.
    private struct Directive {
        var name: Bytes
        var argument: Bytes?
        var isQuoted = false
        var isValid: Bool
    }

    /// Takes the directive up to the next comma outside a quoted string
    /// from `rest`, with the comma. A quoted argument keeps its escapes
    /// (no directive read here has one that needs them).
    private static func nextDirective(_ rest: inout Bytes) -> Directive {
        var index = rest.startIndex
        while index < rest.endIndex, isSpace(rest[index]) { index += 1 }
        let nameStart = index
        while index < rest.endIndex, isTokenByte(rest[index]) { index += 1 }
        var directive = Directive(name: rest[nameStart..<index], argument: nil, isValid: index > nameStart)
        if index < rest.endIndex, rest[index] == UInt8(ascii: "=") {
            index += 1
            if index < rest.endIndex, rest[index] == UInt8(ascii: "\"") {
                index += 1
                let start = index
                var closed = false
                while index < rest.endIndex {
                    if rest[index] == UInt8(ascii: "\"") {
                        closed = true
                        break
                    }
                    index += rest[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index = min(index, rest.endIndex)
                directive.argument = rest[start..<index]
                directive.isQuoted = true
                if closed { index += 1 }
                directive.isValid = directive.isValid && closed
            } else {
                let start = index
                while index < rest.endIndex, isTokenByte(rest[index]) { index += 1 }
                directive.argument = rest[start..<index]
                directive.isValid = directive.isValid && index > start
            }
        }
        while index < rest.endIndex, isSpace(rest[index]) { index += 1 }
        // Anything else before the comma (a space before `=`, a stray quote) spoils the directive.
        if index < rest.endIndex, rest[index] != UInt8(ascii: ",") {
            directive.isValid = false
            while index < rest.endIndex, rest[index] != UInt8(ascii: ",") { index += 1 }
        }
        rest = rest[min(index + 1, rest.endIndex)...]
        return directive
    }

    private mutating func apply(_ directive: Directive) {
        let name = directive.name
        guard directive.isValid else {
            // A max-age that cannot be read makes the response stale, not fresh by other means.
            if maxAge == nil, Self.matches(name, "max-age") { maxAge = 0 }
            return
        }
        let seconds = directive.argument.map(Self.seconds)
        if Self.matches(name, "max-age") {
            if maxAge == nil { maxAge = seconds.map { $0 ?? 0 } ?? 0 }
        } else if Self.matches(name, "no-store") {
            noStore = true
        } else if Self.matches(name, "no-cache") {
            // Only the quoted form names fields (§5.2.2.4); any other argument is read as plain no-cache.
            let fields = directive.argument.flatMap { $0.isEmpty || !directive.isQuoted ? nil : String(decoding: $0, as: UTF8.self) }?
                .split(separator: ",").map { String($0.trimmingASCIISpaces()).lowercased() }.filter { !$0.isEmpty }
            if let fields, !fields.isEmpty { noCacheFields += fields } else { noCache = true }
        } else if Self.matches(name, "must-revalidate") {
            mustRevalidate = true
        } else if Self.matches(name, "must-understand") {
            mustUnderstand = true
        } else if Self.matches(name, "immutable") {
            immutable = true
        } else if Self.matches(name, "stale-while-revalidate") {
            if staleWhileRevalidate == nil { staleWhileRevalidate = seconds.flatMap { $0 } ?? 0 }
        } else if Self.matches(name, "stale-if-error") {
            if staleIfError == nil { staleIfError = seconds.flatMap { $0 } ?? 0 }
        } else if Self.matches(name, "max-stale") {
            if maxStale == nil { maxStale = seconds.map { $0 ?? 0 } ?? Int.max }
        } else if Self.matches(name, "min-fresh") {
            if minFresh == nil, let value = seconds.flatMap({ $0 }) { minFresh = value }
        } else if Self.matches(name, "public") || Self.matches(name, "private") {
            isPublicOrPrivate = true
        } else if Self.matches(name, "only-if-cached") {
            onlyIfCached = true
        }
    }

    /// Whether `name` is `directive` (lowercase) in any ASCII case.
    private static func matches(_ name: Bytes, _ directive: StaticString) -> Bool {
        guard name.count == directive.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: directive.utf8Start, count: directive.utf8CodeUnitCount)
        return zip(name, expected).allSatisfy { byte, lower in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == lower : byte == lower
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// RFC 9110 §5.6.2 tchar.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Delta-seconds (RFC 9111 §1.2.2), capped at 2^31; `nil` if not all ASCII digits.
    private static func seconds(_ digits: Bytes) -> Int? {
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        guard digits.count <= 10 else { return 1 << 31 }
        return min(digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }, 1 << 31)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingASCIISpaces() -> SubSequence {
        var start = startIndex
        var end = endIndex
        while start < end, self[start] == " " || self[start] == "\t" { start = index(after: start) }
        while end > start, self[index(before: end)] == " " || self[index(before: end)] == "\t" { end = index(before: end) }
        return self[start..<end]
    }
}
