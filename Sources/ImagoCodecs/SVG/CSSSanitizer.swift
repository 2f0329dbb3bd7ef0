import Foundation

/// Makes the CSS an SVG carries (a `<style>` sheet, a `style` attribute, a
/// presentation attribute such as `fill="url(#a)"`) safe to hand on: no
/// fetch and no script may come of it.
///
/// `@import` rules go; a `url()` that names neither a fragment of the
/// document (`url(#a)`) nor an image data URL becomes `none`. CSS that
/// cannot be rewritten with confidence goes whole: CSS naming
/// `javascript:`, `vbscript:`, `expression(`, `-moz-binding` or
/// `behavior`; CSS with functions that take URLs as strings
/// (`image-set()`, `image()`, `src()`, `cross-fade()`, `element()`); and
/// CSS whose backslash escapes spell any of those, `url(` or `@import`
/// (`u\72l(`), which a browser would read.
enum CSSSanitizer {
    /// `css` made safe; nil when it must go whole.
    static func sanitized(_ css: String) -> String? {
        let isEscaped = css.utf8.contains(UInt8(ascii: "\\"))
        let probe = isEscaped ? unescaped(css) : css
        let scripting = ["javascript:", "vbscript:", "expression(", "-moz-binding", "behavior"]
        if scripting.contains(where: { ASCIISearch.contains($0, in: probe) }) { return nil }
        let fetching = ["url(", "@import", "image-set(", "image(", "src(", "cross-fade(", "element("]
        if isEscaped, fetching.contains(where: { ASCIISearch.contains($0, in: probe) }) { return nil }
        return rewritten(Array(css.utf8))
    }

    /// The ids that `css`'s `url(#id)` references name, in order.
    static func fragmentReferences(in css: String) -> [String] {
        var references: [String] = []
        let bytes = Array(css.utf8)
        var start = 0
        while let found = ASCIISearch.firstIndex(of: "url(", in: css, from: start) {
            start = found + 4
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ")")) ?? bytes.count
            let quotes: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "\""), UInt8(ascii: "'")]
            let argument = bytes[start..<end].drop { quotes.contains($0) }.reversed().drop { quotes.contains($0) }.reversed()
            if argument.first == UInt8(ascii: "#") { references.append(String(decoding: argument.dropFirst(), as: UTF8.self)) }
        }
        return references
    }

    /// Functions whose string arguments are URLs: CSS naming one goes whole.
    private static let stringURLFunctions: Set<String> = ["image-set", "-webkit-image-set", "image", "src", "cross-fade", "element", "expression"]

    /// `css` with comments made spaces, `@import` rules removed and
    /// foreign `url()`s made `none`; nil for a URL function it does not
    /// rewrite or a `url(` left open.
    private static func rewritten(_ bytes: [UInt8]) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                // A space, not nothing: `ur/**/l(` must not become `url(`.
                index = find([UInt8(ascii: "*"), UInt8(ascii: "/")], in: bytes, from: index + 2).map { $0 + 2 } ?? bytes.count
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                let end = stringEnd(bytes, from: index)
                output.append(contentsOf: bytes[index..<end])
                index = end
            } else if byte == UInt8(ascii: "@") {
                let name = identifier(bytes, from: index + 1)
                if String(decoding: bytes[(index + 1)..<name], as: UTF8.self).lowercased() == "import" {
                    index = statementEnd(bytes, from: name)
                } else {
                    output.append(contentsOf: bytes[index..<name])
                    index = name
                }
            } else if isIdentifierByte(byte), !(byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) {
                let end = identifier(bytes, from: index)
                let name = String(decoding: bytes[index..<end], as: UTF8.self).lowercased()
                guard end < bytes.count, bytes[end] == UInt8(ascii: "(") else {
                    output.append(contentsOf: bytes[index..<end])
                    index = end
                    continue
                }
                if stringURLFunctions.contains(name) { return nil }
                guard name == "url" else {
                    output.append(contentsOf: bytes[index...end])
                    index = end + 1
                    continue
                }
                guard let (argument, close) = urlArgument(bytes, from: end + 1) else { return nil }
                output.append(contentsOf: isAllowedURL(argument) ? Array(bytes[index...close]) : Array("none".utf8))
                index = close + 1
            } else {
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether a `url()` may stay: a fragment of the document, or an image data URL.
    private static func isAllowedURL(_ argument: String) -> Bool {
        argument.hasPrefix("#") || ASCIISearch.firstIndex(of: "data:image/", in: argument.prefix(11)) == 0
    }

    /// The argument of the `url(` whose parenthesis ends before `start`, and
    /// where its closing parenthesis is; nil if it is not closed.
    private static func urlArgument(_ bytes: [UInt8], from start: Int) -> (String, Int)? {
        var index = start
        while index < bytes.count, XMLTokenizer.isWhitespace(bytes[index]) { index += 1 }
        guard index < bytes.count else { return nil }
        let argument: String
        if bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
            let end = stringEnd(bytes, from: index)
            guard end - index >= 2 else { return nil }
            argument = String(decoding: bytes[(index + 1)..<(end - 1)], as: UTF8.self)
            index = end
            while index < bytes.count, XMLTokenizer.isWhitespace(bytes[index]) { index += 1 }
        } else {
            let end = bytes[index...].firstIndex(of: UInt8(ascii: ")")) ?? bytes.count
            argument = String(decoding: bytes[index..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            index = end
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: ")") else { return nil }
        return (argument, index)
    }

    /// Where the string opening at `start` ends (after its closing quote,
    /// or at the end of the CSS); escaped characters inside are skipped.
    private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int {
        let quote = bytes[start]
        var index = start + 1
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if bytes[index] == quote { return index + 1 }
            index += 1
        }
        return bytes.count
    }

    /// Where an at-rule statement starting at `start` ends: after its `;`
    /// (outside strings), or at the end.
    private static func statementEnd(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: ";"): return index + 1
            case UInt8(ascii: "\""), UInt8(ascii: "'"): index = stringEnd(bytes, from: index)
            default: index += 1
            }
        }
        return bytes.count
    }

    private static func identifier(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count, isIdentifierByte(bytes[index]) { index += 1 }
        return index
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), 0x80...:
            true
        default: false
        }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard start <= bytes.count - needle.count else { return nil }
        return (start...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// `css` with its backslash escapes decoded (`\75` and `\u` are both
    /// `u`), comments removed: what a browser reads, for looking into.
    static func unescaped(_ css: String) -> String {
        var scalars = String.UnicodeScalarView()
        var iterator = Array(css.unicodeScalars)[...]
        while let scalar = iterator.popFirst() {
            guard scalar == "\\" else {
                scalars.append(scalar)
                continue
            }
            var hex = ""
            while hex.count < 6, let next = iterator.first, next.properties.isASCIIHexDigit {
                hex.unicodeScalars.append(next)
                iterator = iterator.dropFirst()
            }
            if hex.isEmpty {
                if let next = iterator.popFirst(), next != "\n" { scalars.append(next) }
                continue
            }
            if let next = iterator.first, next == " " || next == "\t" || next == "\n" { iterator = iterator.dropFirst() }
            scalars.append(UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init) ?? "\u{FFFD}")
        }
        var text = String(scalars)
        while let open = text.range(of: "/*") {
            let close = text.range(of: "*/", range: open.upperBound..<text.endIndex)?.upperBound ?? text.endIndex
            text.replaceSubrange(open.lowerBound..<close, with: "")
        }
        return text
    }
}
