import Foundation

/// Reads an XML document one ``XMLToken`` at a time, for the SVG
/// sanitiser and scanner: a small, strict reader of its own rather than a
/// full XML parser, so that what it does not understand is refused
/// instead of guessed at.
///
/// It reads UTF-8 (and ASCII and ISO-8859-1, which it turns into UTF-8),
/// resolves character references, the five predefined entities and the
/// general entities a DOCTYPE's internal subset declares with a plain
/// value. It refuses, with the line and column: external entities (XXE),
/// parameter entities, entity values that hold references or markup
/// (which is how "billion laughs" expands), more than
/// ``maximumEntityExpansion`` bytes of expanded entities, an unterminated
/// tag, comment, CDATA section or attribute value, `<` in an attribute
/// value, a duplicated attribute, undefined entities, and bytes that are
/// not valid UTF-8. Element nesting is not its concern: ``next()`` hands
/// tags on and the caller matches them.
///
/// ```swift
/// var tokenizer = XMLTokenizer(data)
/// while let token = try tokenizer.next() { ... }
/// ```
struct XMLTokenizer {
    /// The most bytes that expanded entities may add to a document.
    static let maximumEntityExpansion = 1 << 20

    private enum Encoding { case utf8, latin1 }

    private let bytes: [UInt8]
    private var position = 0
    private var encoding = Encoding.utf8
    private var entities: [String: String] = [:]
    private var expandedEntityBytes = 0
    private var hasReadToken = false

    /// A tokenizer at the start of `data` (after a UTF-8 byte order mark).
    init(_ data: Data) {
        bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// The byte offset reading has reached.
    var offset: Int { position }

    /// The next token; nil at the end of the data.
    mutating func next() throws(XMLSyntaxError) -> XMLToken? {
        guard position < bytes.count else { return nil }
        let isFirst = !hasReadToken
        hasReadToken = true
        if isFirst, bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw error("UTF-16 documents are not supported", refusing: true)
        }
        guard bytes[position] == UInt8(ascii: "<") else { return .text(try readText(), isCDATA: false) }
        if hasPrefix("<?") { return try readProcessingInstruction(isFirst: isFirst) }
        if hasPrefix("<!--") { return try readComment() }
        if hasPrefix("<![CDATA[") { return try readCDATA() }
        if hasPrefix("<!DOCTYPE") { return try readDoctype() }
        if hasPrefix("</") { return try readEndTag() }
        if hasPrefix("<!") { throw error("unknown markup declaration") }
        return .startTag(try readStartTag())
    }

    // MARK: Markup

    private mutating func readProcessingInstruction(isFirst: Bool) throws(XMLSyntaxError) -> XMLToken {
        let start = position
        position += 2
        guard let target = try readName() else { throw error("<? not followed by a name") }
        guard let end = find("?>") else { throw error("unterminated processing instruction <?\(target)", at: start) }
        let content = position..<end
        position = end + 2
        guard target.lowercased() == "xml" else { return .processingInstruction(target: target) }
        guard isFirst, target == "xml" else { throw error("an XML declaration not at the start of the document", at: start) }
        try readEncoding(in: content)
        return .declaration
    }

    /// Takes the declaration's `encoding`: UTF-8, ASCII (a subset of it)
    /// or ISO-8859-1; any other is refused.
    private mutating func readEncoding(in content: Range<Int>) throws(XMLSyntaxError) {
        let text = String(decoding: bytes[content], as: UTF8.self)
        guard let range = text.range(of: "encoding") else { return }
        let rest = text[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { throw error("a malformed encoding in the XML declaration") }
        let name = rest.dropFirst().prefix { $0 != quote }.lowercased()
        switch name {
        case "utf-8", "utf8", "us-ascii", "ascii": encoding = .utf8
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "iso_8859-1": encoding = .latin1
        default: throw error("the encoding \"\(name)\" is not supported (UTF-8 and ISO-8859-1 are)", refusing: true)
        }
    }

    private mutating func readComment() throws(XMLSyntaxError) -> XMLToken {
        let start = position
        guard let end = find("-->", from: position + 4) else { throw error("unterminated comment", at: start) }
        position = end + 3
        return .comment
    }

    private mutating func readCDATA() throws(XMLSyntaxError) -> XMLToken {
        let start = position
        guard let end = find("]]>", from: position + 9) else { throw error("unterminated CDATA section", at: start) }
        var text: [UInt8] = []
        append(position + 9..<end, to: &text, normalizingAttributeSpace: false)
        position = end + 3
        return .text(try string(text, at: start), isCDATA: true)
    }

    private mutating func readEndTag() throws(XMLSyntaxError) -> XMLToken {
        let start = position
        position += 2
        guard let name = try readName() else { throw error("</ not followed by a name", at: start) }
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else { throw error("unterminated end tag </\(name)", at: start) }
        position += 1
        return .endTag(name: name)
    }

    private mutating func readStartTag() throws(XMLSyntaxError) -> XMLStartTag {
        let start = position
        position += 1
        guard let name = try readName() else { throw error("< not followed by a name", at: start) }
        var tag = XMLStartTag(name: name, attributes: [], isEmpty: false)
        while true {
            let spaced = skipWhitespace()
            guard position < bytes.count else { throw error("unterminated tag <\(name)", at: start) }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                return tag
            }
            if hasPrefix("/>") {
                position += 2
                tag.isEmpty = true
                return tag
            }
            guard spaced else { throw error("no space before an attribute of <\(name)") }
            let attributeStart = position
            guard let attribute = try readName() else { throw error("a malformed attribute in <\(name)") }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                throw error("the attribute \(attribute) of <\(name) has no value", at: attributeStart)
            }
            position += 1
            skipWhitespace()
            let value = try readAttributeValue(of: attribute, in: name)
            guard !tag.attributes.contains(where: { $0.name == attribute }) else {
                throw error("the attribute \(attribute) appears twice in <\(name)", at: attributeStart)
            }
            tag.attributes.append(XMLAttribute(name: attribute, value: value))
        }
    }

    private mutating func readAttributeValue(of attribute: String, in element: String) throws(XMLSyntaxError) -> String {
        let start = position
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
            throw error("the value of \(attribute) in <\(element) is not quoted")
        }
        let quote = bytes[position]
        position += 1
        var value: [UInt8] = []
        var runStart = position
        while true {
            guard position < bytes.count else { throw error("unterminated value of \(attribute) in <\(element)", at: start) }
            let byte = bytes[position]
            if byte == quote { break }
            if byte == UInt8(ascii: "<") { throw error("< in the value of \(attribute) in <\(element)") }
            if byte == UInt8(ascii: "&") {
                append(runStart..<position, to: &value, normalizingAttributeSpace: true)
                try readReference(into: &value)
                runStart = position
            } else {
                position += 1
            }
        }
        append(runStart..<position, to: &value, normalizingAttributeSpace: true)
        position += 1
        return try string(value, at: start)
    }

    private mutating func readText() throws(XMLSyntaxError) -> String {
        let start = position
        var text: [UInt8] = []
        var runStart = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "<") {
            if bytes[position] == UInt8(ascii: "&") {
                append(runStart..<position, to: &text, normalizingAttributeSpace: false)
                try readReference(into: &text)
                runStart = position
            } else {
                position += 1
            }
        }
        append(runStart..<position, to: &text, normalizingAttributeSpace: false)
        return try string(text, at: start)
    }

    // MARK: References and entities

    /// Reads `&...;` at the position and appends what it stands for.
    private mutating func readReference(into output: inout [UInt8]) throws(XMLSyntaxError) {
        let start = position
        let limit = min(bytes.count, position + 256)
        guard let semicolon = bytes[position..<limit].firstIndex(of: UInt8(ascii: ";")) else {
            throw error("& not followed by a reference (write &amp;)")
        }
        let body = bytes[(position + 1)..<semicolon]
        position = semicolon + 1
        if body.first == UInt8(ascii: "#") {
            let isHex = body.dropFirst().first == UInt8(ascii: "x")
            let digits = body.dropFirst(isHex ? 2 : 1)
            let isDigit = { (byte: UInt8) in (byte >= 0x30 && byte <= 0x39) || (isHex && (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66) }
            guard !digits.isEmpty, digits.count <= 8, digits.allSatisfy(isDigit),
                let value = UInt32(String(decoding: digits, as: UTF8.self), radix: isHex ? 16 : 10),
                Self.isXMLCharacter(value), let scalar = Unicode.Scalar(value)
            else {
                throw error("a malformed character reference &\(String(decoding: body, as: UTF8.self));", at: start)
            }
            output.append(contentsOf: Array(String(Character(scalar)).utf8))
            return
        }
        let name = String(decoding: body, as: UTF8.self)
        switch name {
        case "lt": output.append(UInt8(ascii: "<"))
        case "gt": output.append(UInt8(ascii: ">"))
        case "amp": output.append(UInt8(ascii: "&"))
        case "quot": output.append(UInt8(ascii: "\""))
        case "apos": output.append(UInt8(ascii: "'"))
        default:
            guard let value = entities[name] else { throw error("the entity &\(name); is not defined", at: start) }
            expandedEntityBytes += value.utf8.count
            guard expandedEntityBytes <= Self.maximumEntityExpansion else {
                throw error("entities expand to more than \(Self.maximumEntityExpansion) bytes", at: start, refusing: true)
            }
            output.append(contentsOf: Array(value.utf8))
        }
    }

    /// Whether `value` is a character XML allows.
    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// `<!DOCTYPE name [external id] [internal subset]>`; the subset's
    /// general entities are kept, as long as they are plain text.
    private mutating func readDoctype() throws(XMLSyntaxError) -> XMLToken {
        let start = position
        position += 9
        guard skipWhitespace(), try readName() != nil else { throw error("a malformed DOCTYPE", at: start) }
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw error("unterminated DOCTYPE", at: start) }
            switch bytes[position] {
            case UInt8(ascii: ">"):
                position += 1
                return .doctype
            case UInt8(ascii: "["):
                position += 1
                try readInternalSubset(start: start)
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                _ = try readLiteral()
            default:
                guard let word = try readName(), word == "SYSTEM" || word == "PUBLIC" else { throw error("a malformed DOCTYPE", at: start) }
            }
        }
    }

    private mutating func readInternalSubset(start: Int) throws(XMLSyntaxError) {
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw error("unterminated DOCTYPE", at: start) }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return
            }
            if hasPrefix("<!--") {
                _ = try readComment()
            } else if hasPrefix("<?") {
                guard let end = find("?>") else { throw error("unterminated processing instruction in the DOCTYPE") }
                position = end + 2
            } else if hasPrefix("<!ENTITY") {
                try readEntityDeclaration()
            } else if hasPrefix("<!ATTLIST") || hasPrefix("<!ELEMENT") || hasPrefix("<!NOTATION") {
                // Without effect once the DOCTYPE is dropped: skipped.
                try skipDeclaration()
            } else if bytes[position] == UInt8(ascii: "%") {
                throw error("a parameter entity reference in the DOCTYPE is refused", refusing: true)
            } else {
                throw error("an unknown declaration in the DOCTYPE")
            }
        }
    }

    private mutating func readEntityDeclaration() throws(XMLSyntaxError) {
        let start = position
        position += 8
        guard skipWhitespace() else { throw error("a malformed ENTITY declaration", at: start) }
        if position < bytes.count, bytes[position] == UInt8(ascii: "%") {
            throw error("the parameter entity declaration is refused", at: start, refusing: true)
        }
        guard let name = try readName(), skipWhitespace(), position < bytes.count else { throw error("a malformed ENTITY declaration", at: start) }
        guard bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
            throw error("the external entity &\(name); is refused (SYSTEM or PUBLIC)", at: start, refusing: true)
        }
        let literal = try readLiteral()
        if literal.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "<") }) {
            throw error("the entity &\(name); holds references or markup, which are not expanded", at: start, refusing: true)
        }
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else { throw error("a malformed ENTITY declaration", at: start) }
        position += 1
        var value: [UInt8] = []
        append(literal.indices, of: literal, to: &value)
        // The first declaration of an entity is binding.
        if entities[name] == nil { entities[name] = try string(value, at: start) }
    }

    private mutating func skipDeclaration() throws(XMLSyntaxError) {
        let start = position
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: ">"):
                position += 1
                return
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                _ = try readLiteral()
            default:
                position += 1
            }
        }
        throw error("unterminated declaration in the DOCTYPE", at: start)
    }

    /// A quoted literal's bytes, the quotes left out.
    private mutating func readLiteral() throws(XMLSyntaxError) -> ArraySlice<UInt8> {
        let start = position
        let quote = bytes[position]
        guard let end = bytes[(position + 1)...].firstIndex(of: quote) else { throw error("unterminated quoted literal", at: start) }
        position = end + 1
        return bytes[(start + 1)..<end]
    }

    // MARK: Bytes

    /// Reads a name (letters, digits and `_:.-`, or any non-ASCII
    /// character; not starting with a digit, `.` or `-`); nil if none starts here.
    private mutating func readName() throws(XMLSyntaxError) -> String? {
        let start = position
        guard position < bytes.count, Self.isNameStart(bytes[position]) else { return nil }
        position += 1
        while position < bytes.count, Self.isNameStart(bytes[position]) || Self.isNameRest(bytes[position]) { position += 1 }
        var name: [UInt8] = []
        append(start..<position, to: &name, normalizingAttributeSpace: false)
        return try string(name, at: start)
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: ":"), 0x80...: true
        default: false
        }
    }

    private static func isNameRest(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."): true
        default: false
        }
    }

    /// Skips spaces, tabs and line ends; whether there were any.
    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = position
        while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
        return position > start
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Appends the bytes of `range` in UTF-8, line ends made `\n`; in an
    /// attribute value, whitespace characters made spaces (a CR LF pair one space).
    private func append(_ range: Range<Int>, to output: inout [UInt8], normalizingAttributeSpace: Bool) {
        append(range, of: bytes[...], to: &output, normalizingAttributeSpace: normalizingAttributeSpace)
    }

    private func append(
        _ range: Range<Int>, of source: ArraySlice<UInt8>, to output: inout [UInt8], normalizingAttributeSpace: Bool = false
    ) {
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = source[index]
            index += 1
            switch byte {
            case 0x0D:
                if index < range.upperBound, source[index] == 0x0A { index += 1 }
                output.append(normalizingAttributeSpace ? 0x20 : 0x0A)
            case 0x09, 0x0A:
                output.append(normalizingAttributeSpace ? 0x20 : byte)
            case 0x80... where encoding == .latin1:
                output.append(0xC0 | byte >> 6)
                output.append(0x80 | byte & 0x3F)
            default:
                output.append(byte)
            }
        }
    }

    /// `bytes` as a string: an error if they are not valid UTF-8 or hold a
    /// control character XML does not allow.
    private func string(_ bytes: [UInt8], at start: Int) throws(XMLSyntaxError) -> String {
        if let bad = bytes.first(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            throw error("the control character \(bad) is not allowed in XML", at: start)
        }
        guard let string = String(validating: bytes, as: UTF8.self) else { throw error("bytes that are not UTF-8", at: start) }
        return string
    }

    private func hasPrefix(_ prefix: String) -> Bool {
        bytes[position...].starts(with: prefix.utf8)
    }

    /// Where `pattern` next starts at or after `start`.
    private func find(_ pattern: String, from start: Int? = nil) -> Int? {
        let needle = Array(pattern.utf8)
        var index = start ?? position
        guard let first = needle.first else { return nil }
        while index + needle.count <= bytes.count {
            guard let candidate = bytes[index...].firstIndex(of: first), candidate + needle.count <= bytes.count else { return nil }
            if bytes[candidate..<(candidate + needle.count)].elementsEqual(needle) { return candidate }
            index = candidate + 1
        }
        return nil
    }

    /// An error at `offset` (by default, where reading has reached).
    func error(_ reason: String, at offset: Int? = nil, refusing: Bool = false) -> XMLSyntaxError {
        let offset = min(offset ?? position, bytes.count)
        let before = bytes[..<offset]
        let line = before.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        return XMLSyntaxError(line: line, column: offset - lineStart + 1, reason: reason, isRefusal: refusing)
    }
}
