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
        #expect(structure.cost.elements == 7 + 2 * 3)
        #expect(structure.depth == 3)
    }

    @Test("a fan-out multiplies; the count saturates instead of overflowing")
    func fanOut() throws {
        var body = "<g id=\"l0\"/>"
        for level in 1...40 { body += "<g id=\"l\(level)\">" + String(repeating: "<use href=\"#l\(level - 1)\"/>", count: 10) + "</g>" }
        #expect(try Self.scan(body).cost.elements == SVGStructure.countLimit)
        let small = try Self.scan(
            "<g id=\"l0\"/><g id=\"l1\"><use href=\"#l0\"/><use href=\"#l0\"/></g><g id=\"l2\"><use href=\"#l1\"/><use href=\"#l1\"/></g>")
        // svg; l0; l1 + 2 uses (each 1 + l0); l2 + 2 uses (each 1 + l1's 5) again drawn.
        #expect(small.cost.elements == 1 + 1 + 5 + (1 + 2 * (1 + 5)))
    }

    @Test("url() references in attributes and style attributes count; links of <a> do not")
    func urlReferences() throws {
        let structure = try Self.scan(
            "<pattern id=\"p\"><rect/><rect/></pattern><rect fill=\"url(#p)\"/><rect style=\"stroke:url('#p')\"/><a href=\"#p\"/>")
        // svg, pattern, 2 rects, 2 rects each drawing the pattern (3), a.
        #expect(structure.cost.elements == 1 + 3 + 2 * (1 + 3) + 1)
    }

    @Test("filter primitives run once per filtered element; a style sheet's filter may apply to every element")
    func filterRuns() throws {
        let filter = "<filter id=\"f\"><feGaussianBlur/><feOffset/><feMerge><feMergeNode/></feMerge></filter>"
        #expect(try Self.scan(filter).cost.filterRuns == 3)
        #expect(try Self.scan(filter + "<rect filter=\"url(#f)\"/><rect filter=\"url(#f)\"/>").cost.filterRuns == 3 + 2 * 3)
        let sheet = try Self.scan(filter + "<style>.x{filter:url(#f)}</style><rect/>")
        // 8 elements, each possibly filtered.
        #expect(sheet.cost.filterRuns == 3 + 8 * 3)
    }

    @Test("a marker is drawn at every vertex: counted once for each number of the shape's path or points")
    func markers() throws {
        let marker = "<marker id=\"m\"><rect/><rect/></marker>"
        // svg, marker and its 2 rects, a path of 6 numbers drawing the marker (3) at each.
        #expect(try Self.scan(marker + "<path d=\"M0 0 L1.5.5 10,20\" marker-mid=\"url(#m)\"/>").cost.elements == 4 + 1 + 6 * 3)
        #expect(try Self.scan(marker + "<line marker-end=\"url(#m)\"/>").cost.elements == 4 + 1 + 2 * 3)
        #expect(try Self.scan(marker + "<polyline points=\"0,0 1,1 2,2\" style=\"marker:url(#m)\"/>").cost.elements == 4 + 1 + 6 * 3)
        // From a style sheet: every vertex of the document.
        let sheet = try Self.scan(marker + "<style>path{marker:url(#m)}</style><path d=\"M0 0 1 1\"/><path d=\"M0 0 1 1\"/>")
        #expect(sheet.cost.elements == 7 + 8 * 3)
        #expect(SVGStructure.numberCount("M-1e-3.5,2 h.25.5") == 5)
    }

    @Test("text costs (characters + 64)² a node, inside <text> only, again for every reference")
    func text() throws {
        let node = (3 + 64) * (3 + 64)
        #expect(try Self.scan("<text>abc</text>").cost.text == node)
        #expect(try Self.scan("<text id=\"t\">abc<tspan>abc</tspan></text><use href=\"#t\"/><use href=\"#t\"/>").cost.text == 3 * 2 * node)
        #expect(try Self.scan("<title>abc</title><desc>abc</desc><style>abc</style>").cost.text == 0)
        #expect(try Self.scan("<text>" + String(repeating: "é", count: 1_000) + "</text>").cost.text == 1_064 * 1_064)
    }

    @Test("filter parameters librsvg cannot take: more than 10 octaves, a convolution past 400 taps")
    func unsupportedFilters() throws {
        #expect(try Self.scan("<filter><feTurbulence numOctaves=\"10\"/><feConvolveMatrix order=\"20\"/></filter>").unsupportedFilter == nil)
        #expect(try Self.scan("<filter><feConvolveMatrix order=\"3 100\"/></filter>").unsupportedFilter == nil)
        let octaves = try Self.scan("<filter><feTurbulence numOctaves=\"1000000\"/></filter>").unsupportedFilter
        #expect(octaves?.contains("numOctaves=1000000.0, over the limit of 10") == true, "\(String(describing: octaves))")
        for order in ["21", "20 21", "1e9", "nan"] {
            let refusal = try Self.scan("<filter><feConvolveMatrix order=\"\(order)\"/></filter>").unsupportedFilter
            #expect(refusal?.contains("over librsvg's 400 taps") == true, "\(order)")
        }
    }

    @Test("a cycle counts nothing more")
    func cycle() throws {
        let structure = try Self.scan("<g id=\"a\"><use href=\"#b\"/></g><g id=\"b\"><use href=\"#a\"/></g>")
        #expect(structure.cost.elements < 20)
    }

    @Test("scanning stops past the element limit, the counts at their ceiling")
    func elementLimit() throws {
        let data = Data(("<svg>" + String(repeating: "<g/>", count: 100) + "</svg>").utf8)
        let structure = try SVGStructure(scanning: data, maximumElementCount: 10)
        #expect(structure.elementCount == 11 && structure.cost.elements == SVGStructure.countLimit)
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
