import Foundation
import Testing

@testable import ImagoCodecs

@Suite("SVGSanitizer: scripts, handlers, foreign content, external links and CSS removed; the drawing kept")
struct SVGSanitizerTests {
    static let open = "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"10\" height=\"10\">"

    static func sanitized(_ body: String, _ sanitizer: SVGSanitizer = SVGSanitizer()) throws -> String {
        String(decoding: try sanitizer.sanitize(Data((open + body + "</svg>").utf8)), as: UTF8.self)
    }

    /// `body` as the sanitiser writes a document made of it.
    static func kept(_ body: String) -> String { open + body + "</svg>" }

    @Test("a clean drawing comes out as it went in")
    func cleanDrawing() throws {
        let body = """
            <defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>
            <g transform="translate(1 2)" style="fill:url(#g);stroke:blue"><rect width="5" height="5"/><use xlink:href="#g"/></g>
            <text x="1" y="9">a &lt; b &amp; c</text><image href="data:image/png;base64,AAAA" width="1" height="1"/>
            <style>.a{fill:url(#g)} @media print{.a{fill:red}}</style><a href="#g"><title>t</title></a>
            """
        #expect(try Self.sanitized(body) == Self.kept(body))
    }

    @Test("scripts, foreignObject and other vocabularies go with their content; the rest stays")
    func elementsRemoved() throws {
        let body = """
            <script>alert(1)</script><svg:script xmlns:svg="http://www.w3.org/2000/svg">alert(2)</svg:script>\
            <foreignObject><div xmlns="http://www.w3.org/1999/xhtml"><rect/></div></foreignObject>\
            <h:iframe xmlns:h="http://www.w3.org/1999/xhtml" src="http://x/"/><video src="v.mp4"/>\
            <metadata><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></metadata><rect width="1" height="2"/>
            """
        #expect(try Self.sanitized(body) == Self.kept("<metadata></metadata><rect width=\"1\" height=\"2\"/>"))
    }

    @Test("event handlers, xml:base and HTML's URL attributes go, whatever their prefix or case")
    func attributesRemoved() throws {
        let body = "<rect onload=\"alert(1)\" ONCLICK=\"x\" ev:onfocusin=\"y\" xml:base=\"http://x/\" src=\"http://x/\" width=\"1\"/>"
        #expect(try Self.sanitized(body) == Self.kept("<rect width=\"1\"/>"))
    }

    @Test("links: fragments stay; external, relative, empty and file URLs go; data URLs stay but on <use>")
    func links() throws {
        let cases: [(String, String)] = [
            ("<use href=\"#a\"/>", "<use href=\"#a\"/>"),
            ("<use href=\"other.svg#a\"/>", "<use/>"),
            ("<use xlink:href=\"http://127.0.0.1/a.svg#a\"/>", "<use/>"),
            ("<use href=\"data:image/svg+xml;base64,PHN2Zy8+\"/>", "<use/>"),
            ("<image href=\"file:///etc/passwd\"/>", "<image/>"),
            ("<image xlink:href=\"//evil.example/a.png\"/>", "<image/>"),
            ("<image href=\"\"/>", "<image/>"),
            ("<image href=\" data:image/gif;base64,R0lG\"/>", "<image href=\" data:image/gif;base64,R0lG\"/>"),
            ("<image href=\"data:text/html,&lt;script&gt;\"/>", "<image/>"),
            ("<a href=\"https://example.com/\"><rect/></a>", "<a><rect/></a>"),
            ("<feImage href=\"http://127.0.0.1/x.png\"/>", "<feImage/>"),
        ]
        for (body, expected) in cases {
            #expect(try Self.sanitized(body) == Self.kept(expected), "\(body)")
        }
    }

    @Test("javascript: and vbscript: go from any attribute, however spelled; animations of links and handlers go whole")
    func scriptURLs() throws {
        let cases: [(String, String)] = [
            ("<a href=\"javascript:alert(1)\"><rect/></a>", "<a><rect/></a>"),
            ("<a xlink:href=\" JaVaScRiPt:alert(1)\"/>", "<a/>"),
            ("<a href=\"&#106;ava&#x09;script:alert(1)\"/>", "<a/>"),
            ("<a href=\"java&#10;script:alert(1)\"/>", "<a/>"),
            ("<rect fill=\"red\" data-x=\"vbscript:msgbox\"/>", "<rect fill=\"red\"/>"),
            ("<a><set attributeName=\"href\" to=\"javascript:alert(1)\"/></a>", "<a></a>"),
            ("<a><animate attributeName=\"xlink:href\" values=\"#a;#b\"/></a>", "<a></a>"),
            ("<rect><set attributeName=\"onclick\" to=\"alert(1)\"/></rect>", "<rect></rect>"),
            ("<rect><set attributeName=\"fill\" to=\"red\"/></rect>", "<rect><set attributeName=\"fill\" to=\"red\"/></rect>"),
        ]
        for (body, expected) in cases {
            #expect(try Self.sanitized(body) == Self.kept(expected), "\(body)")
        }
    }

    @Test("CSS: @import goes, external url() becomes none; escapes that spell url( or script take the whole sheet")
    func css() throws {
        let cases: [(String, String)] = [
            ("<style>@import url(http://127.0.0.1/a.css);.a{fill:red}</style>", "<style>.a{fill:red}</style>"),
            ("<style>@IMPORT \"http://x/a.css\" screen;</style>", "<style></style>"),
            (
                "<style>.a{background:url(http://127.0.0.1/a.png);fill:url(#g)}</style>",
                "<style>.a{background:none;fill:url(#g)}</style>"
            ),
            ("<style>.a{cursor:URL( 'http://x/c.cur' ),auto}</style>", "<style>.a{cursor:none,auto}</style>"),
            ("<style>.a{fill:u\\72l(http://x/)}</style>", "<style></style>"),
            ("<style>@\\69mport 'http://x/';</style>", "<style></style>"),
            ("<style>.a{content:\"\\201C\"}</style>", "<style>.a{content:\"\\201C\"}</style>"),
            ("<style>.a{b:ur/**/l(http://x/)}</style>", "<style>.a{b:ur l(http://x/)}</style>"),
            ("<style>.a{background:image-set(\"a.png\" 1x)}</style>", "<style></style>"),
            ("<style>.a{x:expression(alert(1))}</style>", "<style></style>"),
            ("<style><![CDATA[.a>b{fill:url(http://x)}]]></style>", "<style>.a&gt;b{fill:none}</style>"),
            ("<rect style=\"fill:url(http://x/#p) red;stroke:blue\"/>", "<rect style=\"fill:none red;stroke:blue\"/>"),
            ("<rect fill=\"url(http://127.0.0.1/p.svg#p)\"/>", "<rect fill=\"none\"/>"),
            ("<rect filter=\"url('#f')\"/>", "<rect filter=\"url('#f')\"/>"),
            ("<rect style=\"background:url(javascript:alert(1))\"/>", "<rect/>"),
            ("<rect style=\"fill:url(http://x\"/>", "<rect/>"),
        ]
        for (body, expected) in cases {
            #expect(try Self.sanitized(body) == Self.kept(expected), "\(body)")
        }
    }

    @Test("the DOCTYPE, comments and processing instructions go; the declaration is written as UTF-8; entities come out expanded")
    func prolog() throws {
        let text = """
            <?xml version="1.0" encoding="ISO-8859-1"?>
            <?xml-stylesheet href="http://127.0.0.1/a.css"?>
            <!DOCTYPE svg [<!ENTITY w "10">]>
            <!-- comment --><svg xmlns="http://www.w3.org/2000/svg" width="&w;"><!-- inner --><?pi x?><text>&w;</text></svg>

            """
        let output = String(decoding: try SVGSanitizer().sanitize(Data(text.utf8)), as: UTF8.self)
        #expect(
            output == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\"><text>10</text></svg>\n"
        )
    }

    @Test("for librsvg, only PNG, JPEG and GIF data URLs stay")
    func rasterEmbeddedImages() throws {
        let raster = SVGSanitizer(embeddedImages: .raster)
        #expect(try Self.sanitized("<image href=\"data:image/png;base64,AA\"/>", raster) == Self.kept("<image href=\"data:image/png;base64,AA\"/>"))
        #expect(try Self.sanitized("<image href=\"data:image/JPEG,AA\"/>", raster) == Self.kept("<image href=\"data:image/JPEG,AA\"/>"))
        #expect(try Self.sanitized("<image href=\"data:image/svg+xml,&lt;svg/&gt;\"/>", raster) == Self.kept("<image/>"))
        #expect(try Self.sanitized("<image href=\"data:image/webp;base64,AA\"/>", raster) == Self.kept("<image/>"))
    }

    @Test("attribute values are written back escaped: quotes, markup and whitespace references survive a second pass")
    func escaping() throws {
        let body = "<text x=\"&quot;&lt;&amp;&#10;&#9;'\">&lt;&gt;&amp;</text>"
        let once = try Self.sanitized(body)
        #expect(once == Self.kept("<text x=\"&quot;&lt;&amp;&#10;&#9;'\">&lt;&gt;&amp;</text>"))
        #expect(String(decoding: try SVGSanitizer().sanitize(Data(once.utf8)), as: UTF8.self) == once)
    }

    @Test(
        "documents that are not one SVG element are refused as corrupt, with the place",
        arguments: [
            ("<html/>", "the root element is <html>, not <svg>"),
            ("<svg/><svg/>", "a second root element"),
            ("text<svg/>", "text outside the root element"),
            ("<svg><g></svg>", "</svg> does not close <g>"),
            ("<svg><g>", "the element <g> is not closed"),
            ("", "no <svg> element"),
            ("<!-- only -->", "no <svg> element"),
            ("<svg></g>", "</g> does not close <svg>"),
            ("<svg/><!DOCTYPE svg>", "a DOCTYPE after the root element"),
            ("<svg><rect width=\"1\"", "unterminated tag <rect"),
        ])
    func refusedDocuments(text: String, reason: String) {
        #expect {
            try SVGSanitizer().sanitize(Data(text.utf8))
        } throws: { error in
            guard let error = error as? ImageDecodingError else { return false }
            return error.code == .corrupt && error.format == .svg && error.detail.contains(reason) && error.detail.hasPrefix("line ")
        }
    }

    @Test("XXE and billion laughs are refused, not expanded")
    func entityAttacks() {
        let xxe = "<!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><svg xmlns=\"http://www.w3.org/2000/svg\"><text>&x;</text></svg>"
        var laughs = "<!DOCTYPE svg [<!ENTITY lol0 \"lol\">"
        for level in 1...9 { laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">" }
        laughs += "]><svg xmlns=\"http://www.w3.org/2000/svg\"><text>&lol9;</text></svg>"
        for text in [xxe, laughs] {
            #expect {
                try SVGSanitizer().sanitize(Data(text.utf8))
            } throws: { error in
                (error as? ImageDecodingError)?.code == .refused
            }
        }
    }
}
