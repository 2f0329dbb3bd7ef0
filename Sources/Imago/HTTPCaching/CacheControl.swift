/// The Cache-Control directives a private cache acts on (RFC 9111 §5.2 and
/// RFC 5861), parsed from one or more header values. Unknown directives are
/// ignored; a malformed delta-seconds counts as 0, so that a broken header
/// makes an entry stale rather than fresh.
package struct CacheControl: Sendable, Equatable {
    package var maxAge: Int?
    package var noStore = false
    package var noCache = false
    var mustRevalidate = false
    var immutable = false
    var staleWhileRevalidate: Int?
    var staleIfError: Int?

    package init(_ values: [String]) {
        for var value in values {
            // Parsed as ASCII bytes: this runs for every download and every disk hit.
            value.withUTF8 { bytes in
                for directive in bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                    apply(directive)
                }
            }
        }
    }

    private mutating func apply(_ directive: Slice<UnsafeBufferPointer<UInt8>>) {
        let equals = directive.firstIndex(of: UInt8(ascii: "="))
        let name = Self.trimmed(directive[..<(equals ?? directive.endIndex)])
        let argument = equals.flatMap { Self.seconds(directive[($0 + 1)...]) }
        if Self.matches(name, "max-age") {
            maxAge = argument ?? 0
        } else if Self.matches(name, "no-store") {
            noStore = true
        } else if Self.matches(name, "no-cache") {
            // `no-cache="field"` only restricts those fields; a private
            // cache that stores few fields treats it as plain no-cache.
            noCache = true
        } else if Self.matches(name, "must-revalidate") {
            mustRevalidate = true
        } else if Self.matches(name, "immutable") {
            immutable = true
        } else if Self.matches(name, "stale-while-revalidate") {
            staleWhileRevalidate = argument ?? 0
        } else if Self.matches(name, "stale-if-error") {
            staleIfError = argument ?? 0
        }
    }

    /// Whether `name` is `directive` (lowercase) in any ASCII case.
    private static func matches(_ name: Slice<UnsafeBufferPointer<UInt8>>, _ directive: StaticString) -> Bool {
        guard name.count == directive.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: directive.utf8Start, count: directive.utf8CodeUnitCount)
        return zip(name, expected).allSatisfy { byte, lower in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == lower : byte == lower
        }
    }

    /// The bytes without leading and trailing spaces and tabs (HTTP's optional whitespace).
    private static func trimmed(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Slice<UnsafeBufferPointer<UInt8>> {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return bytes[bytes.startIndex..<bytes.startIndex]
        }
        return bytes[first...last]
    }

    /// Delta-seconds, capped at 2^31 as RFC 9111 §1.2.2 asks; `nil` if not a number.
    private static func seconds(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        var digits = trimmed(text)
        let quote = UInt8(ascii: "\"")
        if digits.count >= 2, digits.first == quote, digits.last == quote {
            digits = digits.dropFirst().dropLast()
        }
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
