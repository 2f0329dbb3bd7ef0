import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("SVG: nothing fetched; entities, reference fan-outs, filters, huge sizes and broken XML refused with typed errors")
struct SVGDecoderHostileTests {
    let decoder = SVGDecoder()
    let options = ImageDecodingOptions()

    static func svg(_ body: String, attributes: String = "width=\"40\" height=\"20\"", prolog: String = "") -> Data {
        let open = "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" \(attributes)>"
        return Data((prolog + open + body + "</svg>").utf8)
    }

    func error(_ data: Data, decoder: SVGDecoder = SVGDecoder(), options: ImageDecodingOptions = ImageDecodingOptions()) -> ImageDecodingError? {
        do {
            _ = try decoder.decode(data, options: options)
            return nil
        } catch {
            return error
        }
    }

    /// Whether every pixel of `image` is fully transparent.
    static func isBlank(_ image: Image) -> Bool { stride(from: 3, to: image.pixels.count, by: 4).allSatisfy { image.pixels[$0] == 0 } }

    /// A red PNG written to a fresh folder, and its file URL.
    static func redFile(_ folder: TemporaryDirectory) throws -> String {
        let url = URL(fileURLWithPath: folder.path).appendingPathComponent("red.png")
        try PNGEncoder().encode(PixelFixtures.solid(4, 4, .rgb8, [255, 0, 0])).write(to: url)
        return url.absoluteString
    }

    @Test("external images, uses, style sheets, XIncludes and paint servers are not loaded: no connection, no file read")
    func nothingFetched() throws {
        let listener = try LocalListener()
        let folder = TemporaryDirectory()
        let file = try Self.redFile(folder)
        let body = """
            <style>@import url(\(listener.url("/a.css"))); rect { fill: url(\(listener.url("/p.svg#p"))) }</style>
            <image href="\(file)" width="40" height="20"/>
            <image xlink:href="\(listener.url("/red.png"))" width="40" height="20"/>
            <use href="\(listener.url("/u.svg#a"))"/>
            <rect width="40" height="20" fill="url(\(listener.url("/p.svg#p")))"/>
            <xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="\(file)" parse="text"/>
            <feImage href="\(listener.url("/f.png"))"/>
            """
        let data = Self.svg(body, prolog: "<?xml-stylesheet href=\"\(listener.url("/x.css"))\"?>")
        let image = try decoder.decode(data, options: options)
        #expect(Self.isBlank(image), "nothing drawn: every source was external")
        #expect(listener.connectionCount() == 0)
    }

    @Test("librsvg on its own, handed the document unsanitised, loads neither the file nor the URL: it has no base URL")
    func librsvgHasNoBaseURL() throws {
        let listener = try LocalListener()
        let folder = TemporaryDirectory()
        let file = try Self.redFile(folder)
        for href in [file, listener.url("/red.png"), "red.png", "/etc/passwd"] {
            let data = Self.svg("<image href=\"\(href)\" width=\"40\" height=\"20\"/><use href=\"\(href)#a\"/>")
            let image = try SVGDecoder.render(data, viewport: SVGIntrinsicSize(width: 40, height: 20), at: ImageSize(width: 40, height: 20))
            #expect(Self.isBlank(image), "\(href)")
        }
        #expect(listener.connectionCount() == 0)
        // The listener does see a connection when one is made.
        try listener.connectOnce()
        #expect(listener.connectionCount() == 1)
    }

    @Test("an embedded PNG data URL is drawn")
    func embeddedImage() throws {
        let png = try PNGEncoder().encode(PixelFixtures.solid(4, 4, .rgb8, [255, 0, 0])).base64EncodedString()
        let data = Self.svg("<image href=\"data:image/png;base64,\(png)\" width=\"40\" height=\"20\" preserveAspectRatio=\"none\"/>")
        let image = try decoder.decode(data, options: options)
        #expect(PixelFixtures.pixel(image, 20, 10) == [255, 0, 0, 255])
    }

    @Test("an embedded image whose header declares too many pixels is refused before librsvg decodes it")
    func embeddedBomb() throws {
        // A PNG signature and IHDR declaring 100,000 x 100,000: all the header reader looks at.
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        png += [0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 6, 0, 0, 0, 0, 0, 0, 0]
        let data = Self.svg("<image href=\"data:image/png;base64,\(Data(png).base64EncodedString())\" width=\"4\" height=\"4\"/>")
        #expect(error(data)?.code == .tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000))
        let fake = Self.svg("<image href=\"data:image/png;base64,\(Data("not a png".utf8).base64EncodedString())\" width=\"4\" height=\"4\"/>")
        #expect(error(fake)?.code == .corrupt)
    }

    @Test("a tiny document declaring 100000x100000 is refused from its root element, before any surface")
    func hugeDeclaredSize() {
        let data = Self.svg("<rect width=\"1\" height=\"1\"/>", attributes: "width=\"100000\" height=\"100000\"")
        #expect(data.count < 200)
        #expect(error(data)?.code == .tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000))
        #expect(ImageHeader(data).storedSize == ImageSize(width: 100_000, height: 100_000))
        // A render size asked of a small document is bounded the same way.
        let large = ImageDecodingOptions(targetSize: ImageSize(width: 20_000, height: 20_000))
        #expect(error(Self.svg(""), options: large)?.code == .tooManyPixels(width: 40_000, height: 20_000, limit: 100_000_000))
        let long = ImageDecodingOptions(targetSize: ImageSize(width: 40_000, height: 0))
        #expect(error(Self.svg("", attributes: "width=\"400\" height=\"1\""), options: long)?.code == .refused)
        let absurd = Self.svg("", attributes: "width=\"1e300\" height=\"1e-300\"")
        #expect(error(absurd)?.code == .tooManyPixels(width: 10_000_000, height: 1, limit: 100_000_000) || error(absurd) != nil)
    }

    @Test("XXE and billion-laughs entities are refused")
    func entities() {
        let xxe = Self.svg("<text>&x;</text>", prolog: "<!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>")
        var declarations = "<!ENTITY l0 \"lol\">"
        for level in 1...9 { declarations += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">" }
        let laughs = Self.svg("<text>&l9;</text>", prolog: "<!DOCTYPE svg [\(declarations)]>")
        for data in [xxe, laughs] {
            let refusal = error(data)
            #expect(refusal?.code == .refused && refusal?.format == .svg, "\(String(describing: refusal))")
        }
    }

    @Test("a <use> fan-out (ten uses of ten uses, nine levels: a billion elements) is refused before rendering")
    func useFanOut() {
        var defs = "<g id=\"l0\"><rect width=\"1\" height=\"1\"/></g>"
        for level in 1...9 {
            defs += "<g id=\"l\(level)\">" + String(repeating: "<use href=\"#l\(level - 1)\"/>", count: 10) + "</g>"
        }
        let refusal = error(Self.svg("<defs>\(defs)</defs><use href=\"#l9\"/>"))
        #expect(refusal?.code == .refused)
        #expect(refusal?.detail.contains("elements (references followed), over the limit of 200000") == true, "\(String(describing: refusal))")
        // Through patterns and url() as well.
        var patterns = "<pattern id=\"p0\" width=\"1\" height=\"1\"><rect width=\"1\" height=\"1\"/></pattern>"
        for level in 1...9 {
            patterns += "<pattern id=\"p\(level)\" width=\"1\" height=\"1\">"
            patterns += String(repeating: "<rect width=\"1\" height=\"1\" fill=\"url(#p\(level - 1))\"/>", count: 10) + "</pattern>"
        }
        #expect(error(Self.svg("<defs>\(patterns)</defs><rect width=\"9\" height=\"9\" fill=\"url(#p9)\"/>"))?.code == .refused)
    }

    @Test("a marker on a path of many vertices counts once a vertex: a marker fan-out is refused")
    func markerFanOut() {
        let marker = "<marker id=\"m\">" + String(repeating: "<circle r=\"1\"/>", count: 100) + "</marker>"
        let path = "<path d=\"M0 0" + String(repeating: " L1 1", count: 2_000) + "\" marker-mid=\"url(#m)\"/>"
        let refusal = error(Self.svg(marker + path))
        #expect(refusal?.code == .refused && refusal?.detail.contains("elements (references followed)") == true, "\(String(describing: refusal))")
    }

    @Test("a reference cycle draws nothing more and is not refused")
    func cycle() throws {
        let data = Self.svg("<g id=\"a\"><use href=\"#b\"/></g><g id=\"b\"><use href=\"#a\"/><rect width=\"4\" height=\"4\" fill=\"red\"/></g>")
        #expect(try decoder.decode(data, options: options).size == ImageSize(width: 40, height: 20))
    }

    @Test("filters: a huge blur renders; too many filter runs, by use, by elements or by a style sheet, are refused")
    func filters() throws {
        let blur = "<filter id=\"f\"><feGaussianBlur stdDeviation=\"100000\"/><feOffset dx=\"3\"/></filter>"
        let huge = Self.svg(
            blur + "<rect width=\"100%\" height=\"100%\" fill=\"red\" filter=\"url(#f)\"/>", attributes: "width=\"1500\" height=\"1500\"")
        #expect(try decoder.decode(huge, options: options).size == ImageSize(width: 1500, height: 1500))
        let manyUses = Self.svg(
            blur + "<g id=\"g\" filter=\"url(#f)\"><rect width=\"9\" height=\"9\"/></g>" + String(repeating: "<use href=\"#g\"/>", count: 120))
        let manyElements = Self.svg(blur + String(repeating: "<rect width=\"9\" height=\"9\" filter=\"url(#f)\"/>", count: 120))
        let sheet = Self.svg(blur + "<style>* { filter: url(#f) }</style>" + String(repeating: "<rect width=\"9\" height=\"9\"/>", count: 120))
        for data in [manyUses, manyElements, sheet] {
            let refusal = error(data)
            #expect(refusal?.code == .refused && refusal?.detail.contains("filter primitives") == true, "\(String(describing: refusal))")
        }
        // A style sheet's gradient costs nothing per element.
        let gradient = "<linearGradient id=\"g\"><stop offset=\"0\" stop-color=\"red\"/></linearGradient>"
        let painted = Self.svg(gradient + "<style>rect { fill: url(#g) }</style>" + String(repeating: "<rect width=\"9\" height=\"9\"/>", count: 500))
        #expect(try decoder.decode(painted, options: options).size == ImageSize(width: 40, height: 20))
    }

    @Test("text that librsvg would lay out for seconds is refused: a long node, many references to one")
    func text() {
        let long = Self.svg("<text y=\"10\">" + String(repeating: "lorem ipsum ", count: 1_000) + "</text>")
        let used = Self.svg("<text id=\"t\" y=\"10\">lorem ipsum</text>" + String(repeating: "<use href=\"#t\"/>", count: 3_000))
        for data in [long, used] {
            let refusal = error(data)
            #expect(refusal?.code == .refused && refusal?.detail.contains("text costs") == true, "\(String(describing: refusal))")
        }
    }

    @Test("filter parameters librsvg cannot take are refused, not handed to it: its abort would take the process down")
    func unsupportedFilters() {
        let convolution = "<filter id=\"c\"><feConvolveMatrix order=\"21\" kernelMatrix=\"" + String(repeating: "1 ", count: 441) + "\"/></filter>"
        let turbulence = "<filter id=\"c\"><feTurbulence baseFrequency=\"0.1\" numOctaves=\"1000000\"/></filter>"
        for filter in [convolution, turbulence] {
            let refusal = error(Self.svg(filter + "<rect width=\"40\" height=\"20\" filter=\"url(#c)\"/>"))
            #expect(refusal?.code == .refused, "\(String(describing: refusal))")
        }
    }

    @Test("a render past the CPU time limit fails the decode and runs on, counted; with no overdue render allowed, decodes are refused")
    func renderTimeLimit() {
        // About a quarter of a second of text layout, far past a millisecond.
        let slow = Self.svg("<text y=\"10\">" + String(repeating: "a", count: 2_000) + "</text>")
        let hurried = SVGDecoder(limits: .init(renderCPUTimeLimit: .milliseconds(1), maximumOverdueRenders: 100))
        let refusal = error(slow, decoder: hurried)
        let detail = refusal?.detail ?? ""
        #expect(refusal?.code == .refused && detail.contains("used more than 0.001 seconds of CPU time"), "\(String(describing: refusal))")
        let none = SVGDecoder(limits: .init(maximumOverdueRenders: 0))
        let refused = error(Self.svg(""), decoder: none)
        #expect(refused?.code == .refused && refused?.detail.contains("at most 0 may") == true, "\(String(describing: refused))")
        #expect(error(Self.svg(""), decoder: SVGDecoder(limits: .init(renderCPUTimeLimit: nil, maximumOverdueRenders: 0))) == nil)
    }

    @Test("limits: bytes, nesting depth and drawn elements, each named in the error")
    func limits() {
        let small = SVGDecoder(
            limits: .init(maximumByteCount: 1000, maximumDrawnElementCount: 50, maximumNestingDepth: 5, maximumFilterPrimitiveRuns: 1))
        let cases: [(Data, String)] = [
            (Data(count: 1001), "1001 bytes, over the limit of 1000"),
            (Self.svg("<g><g><g><g><g></g></g></g></g></g>", attributes: ""), "nest 6 deep, over the limit of 5"),
            (Self.svg(String(repeating: "<g/>", count: 60), attributes: ""), "more than 50 elements"),
        ]
        for (data, detail) in cases {
            let refusal = error(data, decoder: small)
            #expect(refusal?.code == .refused && refusal?.detail.contains(detail) == true, "\(String(describing: refusal))")
        }
        // 200 deep is allowed by default; 250 is not (libxml2 would refuse 256).
        let deep = { (depth: Int) in Self.svg(String(repeating: "<g>", count: depth - 1) + String(repeating: "</g>", count: depth - 1)) }
        #expect(error(deep(200)) == nil)
        #expect(error(deep(250))?.code == .refused)
    }

    @Test("truncated and garbled documents are corrupt, never a crash")
    func brokenDocuments() {
        let whole = Self.svg("<rect x=\"1\" width=\"10\" height=\"5\" fill=\"red\"/><text>a</text>", prolog: "<?xml version=\"1.0\"?>")
        for length in stride(from: 1, to: whole.count, by: 3) {
            let truncated = whole.prefix(length)
            guard ImageFormat(sniffing: truncated) == .svg else { continue }
            #expect(error(truncated)?.code == .corrupt, "\(length) bytes")
        }
        var garbled = whole
        garbled[60] = 0x01
        #expect(error(garbled)?.code == .corrupt)
        #expect(error(Data("<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"x\" height=\"-1\"/></svg>".utf8)) == nil)
    }
}
