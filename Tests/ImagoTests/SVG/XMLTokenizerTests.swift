import Foundation
import Testing

@testable import ImagoCodecs

@Suite("XMLTokenizer: tokens, references, entities, encodings; what it refuses, with the line and column")
struct XMLTokenizerTests {
    static func tokens(_ text: String) throws(XMLSyntaxError) -> [XMLToken] {
        try tokens(Data(text.utf8))
    }

    static func tokens(_ data: Data) throws(XMLSyntaxError) -> [XMLToken] {
        var tokenizer = XMLTokenizer(data)
        var tokens: [XMLToken] = []
        while let token = try tokenizer.next() { tokens.append(token) }
        return tokens
    }

    static func error(_ text: String) -> XMLSyntaxError? {
        do {
            _ = try tokens(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("a document's tokens: declaration, comment, processing instruction, tags, attributes, text, CDATA")
    func tokens() throws {
        let tokens = try Self.tokens(
            "<?xml version=\"1.0\"?><!-- hi --><?xml-stylesheet href=\"a\"?><svg a='1' b = \"2\"><g/>x<![CDATA[<y>]]></svg>")
        #expect(
            tokens == [
                .declaration, .comment, .processingInstruction(target: "xml-stylesheet"),
                .startTag(XMLStartTag(name: "svg", attributes: [.init(name: "a", value: "1"), .init(name: "b", value: "2")], isEmpty: false)),
                .startTag(XMLStartTag(name: "g", attributes: [], isEmpty: true)), .text("x", isCDATA: false), .text("<y>", isCDATA: true),
                .endTag(name: "svg"),
            ])
    }

    @Test("references: the five entities, decimal and hex characters; attribute whitespace becomes spaces, referenced whitespace stays")
    func references() throws {
        let tokens = try Self.tokens("<a v=\"&lt;&#65;&#x42;\t&#10;x\r\ny\">&amp;&gt;&quot;&apos;\r\n</a>")
        #expect(tokens.first == .startTag(XMLStartTag(name: "a", attributes: [.init(name: "v", value: "<AB \nx y")], isEmpty: false)))
        #expect(tokens[1] == .text("&>\"'\n", isCDATA: false))
    }

    @Test("a DOCTYPE's plain entities are expanded; its external id and declarations are passed over")
    func internalEntities() throws {
        let text = """
            <!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [
              <!ENTITY ns_svg "http://www.w3.org/2000/svg">
              <!ENTITY ns_svg "ignored: the first declaration binds">
              <!-- a comment -->
              <!ATTLIST svg width CDATA "1">
            ]>
            <svg xmlns="&ns_svg;">&ns_svg;</svg>
            """
        let tokens = try Self.tokens(text)
        #expect(tokens.first == .doctype)
        #expect(
            tokens.contains(
                .startTag(XMLStartTag(name: "svg", attributes: [.init(name: "xmlns", value: "http://www.w3.org/2000/svg")], isEmpty: false))))
        #expect(tokens.contains(.text("http://www.w3.org/2000/svg", isCDATA: false)))
    }

    @Test("ISO-8859-1 is read into UTF-8; other encodings and UTF-16 are refused")
    func encodings() throws {
        var latin = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>".utf8)
        latin.append(0xE9)
        latin.append(contentsOf: Array("</a>".utf8))
        #expect(try Self.tokens(latin).contains(.text("é", isCDATA: false)))
        #expect(Self.error("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><a/>")?.reason.contains("not supported") == true)
        #expect(throws: XMLSyntaxError.self) { try Self.tokens(Data([0xFF, 0xFE, 0x3C, 0x00])) }
        #expect(throws: XMLSyntaxError.self) { try Self.tokens(Data([0x3C, 0x61, 0x3E, 0xC3, 0x28, 0x3C, 0x2F, 0x61, 0x3E])) }
    }

    @Test("XXE, parameter entities, recursive entities and undefined ones are refused, naming the entity")
    func hostileEntities() {
        let cases: [(String, String)] = [
            ("<!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><svg>&x;</svg>", "external entity &x;"),
            ("<!DOCTYPE svg [<!ENTITY x PUBLIC \"-//x\" \"http://127.0.0.1/x\">]><svg/>", "external entity &x;"),
            ("<!DOCTYPE svg [<!ENTITY % p SYSTEM \"http://x/\"> %p;]><svg/>", "parameter entity"),
            ("<!DOCTYPE svg [<!ENTITY a \"aa\"><!ENTITY b \"&a;&a;\">]><svg>&b;</svg>", "the entity &b; holds references"),
            ("<!DOCTYPE svg [<!ENTITY a \"<script>x</script>\">]><svg/>", "the entity &a; holds references or markup"),
            ("<svg>&nope;</svg>", "the entity &nope; is not defined"),
        ]
        for (text, reason) in cases {
            let error = Self.error(text)
            #expect(error?.reason.contains(reason) == true, "\(text): \(String(describing: error))")
        }
    }

    @Test("entities that expand past 1 MiB in all are refused")
    func expansionLimit() {
        let value = String(repeating: "x", count: 1000)
        let text = "<!DOCTYPE svg [<!ENTITY a \"\(value)\">]><svg>" + String(repeating: "&a;", count: 1100) + "</svg>"
        #expect(Self.error(text)?.reason.contains("more than 1048576 bytes") == true)
    }

    @Test(
        "malformed markup is refused with its line and column",
        arguments: [
            ("<svg>\n  <rect x=\"1\"", 2, 3, "unterminated tag <rect"),
            ("<svg a=1/>", 1, 8, "not quoted"),
            ("<svg a=\"<\"/>", 1, 9, "< in the value"),
            ("<svg a=\"1\" a=\"2\"/>", 1, 12, "appears twice"),
            ("<svg a=\"1\"b=\"2\"/>", 1, 11, "no space before an attribute"),
            ("<svg><!-- open", 1, 6, "unterminated comment"),
            ("<svg><![CDATA[ open", 1, 6, "unterminated CDATA"),
            ("<svg>a & b</svg>", 1, 8, "& not followed by a reference"),
            ("<svg>&#0;</svg>", 1, 6, "malformed character reference"),
            ("<svg>&#xD800;</svg>", 1, 6, "malformed character reference"),
            ("<svg>\u{1}</svg>", 1, 6, "control character"),
            ("<svg><?xml version=\"1.0\"?></svg>", 1, 6, "not at the start"),
            ("<svg></ svg>", 1, 6, "</ not followed by a name"),
            ("<svg><!ELEMENT x></svg>", 1, 6, "unknown markup declaration"),
        ])
    func malformed(text: String, line: Int, column: Int, reason: String) {
        let error = Self.error(text)
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))")
        #expect(error?.line == line && error?.column == column, "\(String(describing: error))")
    }
}
