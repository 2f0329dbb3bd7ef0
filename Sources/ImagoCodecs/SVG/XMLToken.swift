import Foundation

/// One piece of an XML document, as ``XMLTokenizer`` reads it.
enum XMLToken: Equatable {
    /// The XML declaration (`<?xml version="1.0"?>`), first in the document.
    case declaration
    /// A processing instruction other than the declaration (`<?xml-stylesheet ...?>`).
    case processingInstruction(target: String)
    case comment
    /// `<!DOCTYPE ...>`. The entities its internal subset declares are
    /// taken in by the tokenizer, which resolves them from then on.
    case doctype
    case startTag(XMLStartTag)
    case endTag(name: String)
    /// Character data, its references resolved and its line ends made
    /// `\n`; `isCDATA` for a CDATA section.
    case text(String, isCDATA: Bool)
}

/// An attribute as written (`xlink:href`), its value with references
/// resolved and whitespace characters written as such made spaces, as an
/// XML parser hands it on.
struct XMLAttribute: Equatable {
    var name: String
    var value: String

    /// The name without its namespace prefix (`href` for `xlink:href`).
    var localName: Substring { name.lastIndex(of: ":").map { name[name.index(after: $0)...] } ?? name[...] }
}

/// A start tag: `<name attributes>`, or `<name attributes/>`.
struct XMLStartTag: Equatable {
    /// The name as written, prefix included (`svg:rect`).
    var name: String
    var attributes: [XMLAttribute]
    /// `<name/>`: no content and no end tag follow.
    var isEmpty: Bool

    /// The name without its namespace prefix.
    var localName: Substring { name.lastIndex(of: ":").map { name[name.index(after: $0)...] } ?? name[...] }

    /// The value of the first attribute whose name without prefix is `localName`.
    func value(of localName: String) -> String? {
        attributes.first { $0.localName == localName }?.value
    }
}

/// Why a document was not read: the line and column (counted from 1, in
/// bytes) where reading stopped, and what was wrong there.
struct XMLSyntaxError: Error, Equatable, CustomStringConvertible {
    var line: Int
    var column: Int
    var reason: String
    /// Whether the document is refused on purpose (an external or
    /// recursive entity, an encoding not read) rather than malformed.
    var isRefusal = false

    var description: String { "line \(line), column \(column): \(reason)" }
}
