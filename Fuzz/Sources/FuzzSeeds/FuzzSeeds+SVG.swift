import Foundation
import ImagoCodecs

extension FuzzSeeds {
    /// SVG documents covering what the sanitiser reads and rewrites (a
    /// DOCTYPE's entities, CDATA, comments, prefixes, CSS, links, handlers)
    /// and what librsvg draws (shapes, paths, gradients, patterns, uses,
    /// filters, masks, markers, text, an embedded PNG), small and quick.
    static func svgSeeds(rgba: Image) throws -> [(String, Data)] {
        let open = "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"24\" height=\"16\""
        func document(_ body: String, attributes: String = "", prolog: String = "") -> Data {
            Data((prolog + open + attributes + ">" + body + "</svg>").utf8)
        }
        let png = try PNGEncoder().encode(rgba).base64EncodedString()
        return [
            (
                "shapes.svg",
                document(
                    "<rect x=\"1\" y=\"1\" width=\"10\" height=\"6\" rx=\"2\" fill=\"red\"/><circle cx=\"16\" cy=\"8\" r=\"5\" stroke=\"#00f\" stroke-width=\"1.5\" fill=\"none\"/><ellipse cx=\"5\" cy=\"12\" rx=\"4\" ry=\"2\"/><line x1=\"0\" y1=\"0\" x2=\"24\" y2=\"16\" stroke=\"green\"/><polygon points=\"1,15 5,10 9,15\"/><polyline points=\"10 15 14 11 18 15\" fill=\"none\" stroke=\"black\"/>"
                )
            ),
            (
                "path.svg",
                document(
                    "<path d=\"M1 1 L10 2 Q 15 8 20 2 C 22 6 18 14 12 15 A 4 3 30 0 1 2 12 Z m 3 -2 h 4 v 3 z\" fill-rule=\"evenodd\" stroke-dasharray=\"2 1\"/>",
                    attributes: " viewBox=\"0 0 24 16\" preserveAspectRatio=\"xMinYMax slice\"")
            ),
            (
                "gradients.svg",
                document(
                    "<defs><linearGradient id=\"a\" x2=\"0\" y2=\"1\" spreadMethod=\"reflect\"><stop offset=\"0\" stop-color=\"red\"/><stop offset=\"1\" stop-color=\"blue\" stop-opacity=\"0.5\"/></linearGradient><radialGradient id=\"b\" xlink:href=\"#a\" fx=\"0.3\"/><pattern id=\"p\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\"><rect width=\"2\" height=\"2\" fill=\"url(#a)\"/></pattern></defs><rect width=\"12\" height=\"16\" fill=\"url(#a)\"/><rect x=\"12\" width=\"12\" height=\"8\" fill=\"url(#b)\"/><rect x=\"12\" y=\"8\" width=\"12\" height=\"8\" fill=\"url(#p)\"/>"
                )
            ),
            (
                "use.svg",
                document(
                    "<defs><symbol id=\"s\" viewBox=\"0 0 2 2\"><circle cx=\"1\" cy=\"1\" r=\"1\"/></symbol><g id=\"g\"><use href=\"#s\" width=\"4\" height=\"4\"/><use xlink:href=\"#s\" x=\"4\" width=\"4\" height=\"4\"/></g></defs><use href=\"#g\"/><use href=\"#g\" y=\"6\" transform=\"rotate(10) scale(1.2 0.8) skewX(5)\"/>"
                )
            ),
            (
                "filters.svg",
                document(
                    "<defs><filter id=\"f\" x=\"-10%\" width=\"120%\"><feGaussianBlur in=\"SourceAlpha\" stdDeviation=\"1.5\" result=\"b\"/><feOffset dx=\"1\" dy=\"1\" result=\"o\"/><feColorMatrix type=\"saturate\" values=\"0.3\"/><feComponentTransfer><feFuncA type=\"linear\" slope=\"0.5\"/></feComponentTransfer><feMerge><feMergeNode in=\"o\"/><feMergeNode in=\"SourceGraphic\"/></feMerge></filter><filter id=\"t\"><feTurbulence baseFrequency=\"0.2\" numOctaves=\"2\"/><feMorphology radius=\"1\"/><feDropShadow dx=\"1\" dy=\"1\"/></filter></defs><rect width=\"12\" height=\"12\" fill=\"orange\" filter=\"url(#f)\"/><circle cx=\"18\" cy=\"8\" r=\"5\" filter=\"url(#t)\"/>"
                )
            ),
            (
                "mask-clip-marker.svg",
                document(
                    "<defs><mask id=\"m\"><rect width=\"24\" height=\"16\" fill=\"white\" opacity=\"0.5\"/></mask><clipPath id=\"c\"><circle cx=\"12\" cy=\"8\" r=\"6\"/></clipPath><marker id=\"k\" markerWidth=\"3\" markerHeight=\"3\" refX=\"1\" refY=\"1\" orient=\"auto\"><path d=\"M0 0 L2 1 L0 2z\"/></marker></defs><g mask=\"url(#m)\" clip-path=\"url(#c)\"><rect width=\"24\" height=\"16\" fill=\"teal\"/></g><path d=\"M2 2 L10 10 L20 4\" stroke=\"black\" fill=\"none\" marker-start=\"url(#k)\" marker-mid=\"url(#k)\" marker-end=\"url(#k)\"/>"
                )
            ),
            (
                "text.svg",
                document(
                    "<text x=\"1\" y=\"12\" font-family=\"sans-serif\" font-size=\"10\" letter-spacing=\"1\">H<tspan dy=\"-2\" fill=\"red\">i</tspan><![CDATA[ & <b>]]></text><defs><path id=\"t\" d=\"M0 15 Q12 0 24 15\"/></defs><text font-size=\"4\"><textPath href=\"#t\">on a path</textPath></text>"
                )
            ),
            (
                "style.svg",
                document(
                    "<style type=\"text/css\"><![CDATA[ rect { fill: url(#g); } .a:hover > circle { stroke: red } @import url(x.css); @media (min-width: 1px) { circle { fill: blue } } ]]></style><defs><linearGradient id=\"g\"><stop offset=\"0\" stop-color=\"#ff0\"/></linearGradient></defs><rect width=\"10\" height=\"10\" style=\"stroke: url(#g); stroke-width: 2px\"/><g class=\"a\"><circle cx=\"16\" cy=\"8\" r=\"4\"/></g>"
                )
            ),
            (
                "doctype-entities.svg",
                document(
                    "<!-- Illustrator --><g id=\"&n;\"><rect width=\"&w;\" height=\"4\"/></g><?pi data?>",
                    prolog:
                        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\" [\n<!ENTITY w \"9\">\n<!ENTITY n \"layer_1\">\n<!-- c -->\n<!ATTLIST svg x CDATA \"0\">\n]>\n"
                )
            ),
            (
                "hostile.svg",
                document(
                    "<script>alert(1)</script><foreignObject><p xmlns=\"http://www.w3.org/1999/xhtml\">x</p></foreignObject><a href=\"javascript:alert(1)\" onclick=\"x\"><rect width=\"4\" height=\"4\"/><set attributeName=\"href\" to=\"javascript:1\"/></a><image href=\"http://127.0.0.1/x.png\" width=\"2\" height=\"2\"/><use href=\"http://127.0.0.1/x.svg#a\"/><rect style=\"fill:u\\72l(http://x/)\" fill=\"url(http://x/#p)\" xml:base=\"http://x/\"/>",
                    attributes: " onload=\"alert(1)\"")
            ),
            (
                "embedded.svg",
                document(
                    "<image href=\"data:image/png;base64,\(png)\" width=\"16\" height=\"12\" preserveAspectRatio=\"none\"/><image xlink:href=\"data:image/svg+xml,%3Csvg/%3E\" width=\"2\" height=\"2\"/>"
                )
            ),
            (
                "nested-prefixed.svg",
                Data(
                    "<svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\" width=\"8\" height=\"8\"><svg:svg x=\"2\" width=\"4\" height=\"4\" viewBox=\"0 0 1 1\"><svg:rect width=\"1\" height=\"1\" fill=\"purple\"/></svg:svg><svg:switch><svg:rect systemLanguage=\"en\" width=\"2\" height=\"2\"/></svg:switch></svg:svg>"
                        .utf8)
            ),
            (
                "latin1-units.svg",
                Data(
                    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0.25in\" height=\"5mm\"><title>caf\u{E9}</title><rect width=\"50%\" height=\"50%\" fill=\"rgb(10%, 20%, 30%)\"/></svg>"
                        .utf8)
            ),
        ]
    }
}
