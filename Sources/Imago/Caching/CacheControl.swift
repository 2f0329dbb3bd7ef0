/// The Cache-Control directives a private cache acts on (RFC 9111 §5.2 and
/// RFC 5861), parsed from one or more header values. Unknown directives are
/// ignored; a malformed delta-seconds counts as 0, so that a broken header
/// makes an entry stale rather than fresh.
struct CacheControl: Sendable, Equatable {
    var maxAge: Int?
    var noStore = false
    var noCache = false
    var mustRevalidate = false
    var immutable = false
    var staleWhileRevalidate: Int?
    var staleIfError: Int?

    init(_ values: [String]) {
        for value in values {
            for directive in value.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1)
                guard let rawName = parts.first else { continue }
                let name = rawName.trimmingASCIISpaces().lowercased()
                let argument = parts.count == 2 ? Self.seconds(parts[1]) : nil
                switch name {
                case "max-age": maxAge = argument ?? 0
                case "no-store": noStore = true
                // `no-cache="field"` only restricts those fields; a private
                // cache that stores few fields treats it as plain no-cache.
                case "no-cache": noCache = true
                case "must-revalidate": mustRevalidate = true
                case "immutable": immutable = true
                case "stale-while-revalidate": staleWhileRevalidate = argument ?? 0
                case "stale-if-error": staleIfError = argument ?? 0
                default: break
                }
            }
        }
    }

    /// Delta-seconds, capped at 2^31 as RFC 9111 §1.2.2 asks; `nil` if not a number.
    private static func seconds(_ text: Substring) -> Int? {
        var digits = text.trimmingASCIISpaces()
        if digits.hasPrefix("\""), digits.hasSuffix("\""), digits.count >= 2 {
            digits = digits.dropFirst().dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else { return nil }
        return digits.count > 10 ? 1 << 31 : min(Int(digits) ?? 0, 1 << 31)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
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
