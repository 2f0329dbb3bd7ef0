import Foundation
import Testing

@testable import ImagoCodecs

@Suite("SVGStructure: elements drawn with references followed, filter runs, depth, embedded images")
struct SVGStructureTests {
    static func scan(_ body: String) throws -> SVGStructure {
        try SVGStructure(scanning: Data("<svg xmlns=\"http://www.w3.org/2000/svg\">\(body)</svg>".utf8))
    }

    @Test("each reference draws its target again, content and references included")
    func references() throws {
        let structure = try Self.scan("<defs><g id=\"a\"><rect/><rect/></g></defs><use href=\"#a\"/><use href=\"#a\"/>")
        // svg, defs, g, 2 rects, 2 uses each drawing g and its 2 rects.
        #expect(structure.elementCount == 7)
        #expect(structure.drawnElementCount == 7 + 2 * 3)
        #expect(structure.depth == 3)
    }

    @Test("a fan-out multiplies; the count saturates instead of overflowing")
    func fanOut() throws {
        var body = "<g id=\"l0\"/>"
        for level in 1...40 { body += "<g id=\"l\(level)\">" + String(repeating: "<use href=\"#l\(level - 1)\"/>", count: 10) + "</g>" }
        #expect(try Self.scan(body).drawnElementCount == SVGStructure.countLimit)
        let small = try Self.scan(
            "<g id=\"l0\"/><g id=\"l1\"><use href=\"#l0\"/><use href=\"#l0\"/></g><g id=\"l2\"><use href=\"#l1\"/><use href=\"#l1\"/></g>")
        // svg; l0; l1 + 2 uses (each 1 + l0); l2 + 2 uses (each 1 + l1's 5) again drawn.
        #expect(small.drawnElementCount == 1 + 1 + 5 + (1 + 2 * (1 + 5)))
    }

    @Test("url() references in attributes and style attributes count; links of <a> do not")
    func urlReferences() throws {
        let structure = try Self.scan(
            "<pattern id=\"p\"><rect/><rect/></pattern><rect fill=\"url(#p)\"/><rect style=\"stroke:url('#p')\"/><a href=\"#p\"/>")
        // svg, pattern, 2 rects, 2 rects each drawing the pattern (3), a.
        #expect(structure.drawnElementCount == 1 + 3 + 2 * (1 + 3) + 1)
    }

    @Test("filter primitives run once per filtered element; a style sheet's filter may apply to every element")
    func filterRuns() throws {
        let filter = "<filter id=\"f\"><feGaussianBlur/><feOffset/><feMerge><feMergeNode/></feMerge></filter>"
        #expect(try Self.scan(filter).filterPrimitiveRuns == 3)
        #expect(try Self.scan(filter + "<rect filter=\"url(#f)\"/><rect filter=\"url(#f)\"/>").filterPrimitiveRuns == 3 + 2 * 3)
        let sheet = try Self.scan(filter + "<style>.x{filter:url(#f)}</style><rect/>")
        // 8 elements, each possibly filtered.
        #expect(sheet.filterPrimitiveRuns == 3 + 8 * 3)
    }

    @Test("a cycle counts nothing more")
    func cycle() throws {
        let structure = try Self.scan("<g id=\"a\"><use href=\"#b\"/></g><g id=\"b\"><use href=\"#a\"/></g>")
        #expect(structure.drawnElementCount < 20)
    }

    @Test("scanning stops past the element limit, the counts at their ceiling")
    func elementLimit() throws {
        let data = Data(("<svg>" + String(repeating: "<g/>", count: 100) + "</svg>").utf8)
        let structure = try SVGStructure(scanning: data, maximumElementCount: 10)
        #expect(structure.elementCount == 11 && structure.drawnElementCount == SVGStructure.countLimit)
    }

    @Test("embedded data URLs are decoded once each, base64 or percent-encoded")
    func embeddedImages() throws {
        let structure = try Self.scan(
            "<image href=\"data:image/png;base64,QUJD\"/><image href=\"data:image/png;base64,QUJD\"/><image href=\"data:image/gif,A%42C\"/>")
        #expect(structure.embeddedImages == [Data("ABC".utf8), Data("ABC".utf8)])
        #expect(SVGStructure.dataURLPayload("data:image/gif,%4") == nil)
        #expect(SVGStructure.dataURLPayload("http://x/") == nil)
    }
}
