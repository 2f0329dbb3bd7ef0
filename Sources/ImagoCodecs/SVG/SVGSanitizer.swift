import Foundation

/// Makes an SVG document safe to show from an image URL: nothing in what
/// it returns runs a script or makes a browser (or librsvg) fetch
/// anything.
///
/// It reads the document with a strict ``XMLTokenizer`` of its own (see
/// there for what is refused: external and recursive entities, unknown
/// encodings, malformed markup) and writes it again, keeping only:
/// - elements SVG draws or describes with (``allowedElements``): no
///   `<script>`, `<foreignObject>`, HTML elements or elements of other
///   vocabularies (their content goes with them), and no animation that
///   targets a link or an event handler;
/// - attributes that are not event handlers (`on*`), `xml:base`, or
///   HTML's URL attributes (`src`, `action`, ...), and that do not name
///   `javascript:` or `vbscript:` anywhere;
/// - links (`href`, `xlink:href`) to a fragment of the document (`#id`)
///   or, but on `<use>`, to an image data URL (``EmbeddedImages``);
/// - CSS (`<style>`, `style`, presentation attributes) as
///   ``CSSSanitizer`` rewrites it: no `@import`, no `url()` but
///   fragments and image data URLs.
///
/// Comments, processing instructions (`<?xml-stylesheet?>`) and the
/// DOCTYPE go; the entities it declared are written out expanded. The
/// output is UTF-8, its attributes in double quotes.
///
/// ```swift
/// let safe = try SVGSanitizer().sanitize(svg)
/// ```
public struct SVGSanitizer: Sendable {
    /// Which image data URLs an `href` may keep.
    public enum EmbeddedImages: Sendable, Hashable {
        /// Every `data:image/` URL: for a browser, which shows an embedded
        /// SVG without scripts or fetches.
        case all
        /// PNG, JPEG and GIF only: for librsvg, which would render an
        /// embedded SVG without this sanitiser or ``SVGDecoder/Limits``.
        case raster
    }

    /// Which image data URLs an `href` may keep. Default: ``EmbeddedImages/all``.
    public var embeddedImages: EmbeddedImages

    /// Creates a sanitiser.
    public init(embeddedImages: EmbeddedImages = .all) {
        self.embeddedImages = embeddedImages
    }

    /// `data` made safe; throws ``ImageDecodingError`` (format
    /// ``ImageFormat/svg``) with the line and column for a document it
    /// does not read: ``ImageDecodingError/Code/refused`` for a DOCTYPE's
    /// external or recursive entities, else
    /// ``ImageDecodingError/Code/corrupt``.
    public func sanitize(_ data: Data) throws(ImageDecodingError) -> Data {
        var pass = Pass(tokenizer: XMLTokenizer(data), embeddedImages: embeddedImages)
        do {
            try pass.run()
        } catch {
            throw Self.decodingError(error)
        }
        return Data(pass.output)
    }

    /// The decoding error for a syntax error: refused for what the
    /// tokenizer turns down on purpose, corrupt otherwise.
    static func decodingError(_ error: XMLSyntaxError) -> ImageDecodingError {
        ImageDecodingError(code: error.isRefusal ? .refused : .corrupt, format: .svg, detail: error.description)
    }

    /// One run over a document: the tokens read, the output written.
    private struct Pass {
        var tokenizer: XMLTokenizer
        let embeddedImages: EmbeddedImages
        var output: [UInt8] = []
        /// The open elements, and whether each is written.
        var open: [(name: String, isKept: Bool)] = []
        /// How many of the open elements are dropped (their content goes with them).
        var droppedDepth = 0
        /// The text of the open `<style>` element, written once it closes.
        var styleSheet: String?
        var hasRoot = false

        init(tokenizer: XMLTokenizer, embeddedImages: EmbeddedImages) {
            self.tokenizer = tokenizer
            self.embeddedImages = embeddedImages
        }

        mutating func run() throws(XMLSyntaxError) {
            while let token = try tokenizer.next() {
                switch token {
                case .declaration:
                    output.append(contentsOf: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>".utf8)
                case .processingInstruction, .comment:
                    break
                case .doctype:
                    guard !hasRoot else { throw tokenizer.error("a DOCTYPE after the root element") }
                case .text(let text, _):
                    try write(text: text)
                case .startTag(let tag):
                    try start(tag)
                case .endTag(let name):
                    try end(name)
                }
            }
            if let unclosed = open.last { throw tokenizer.error("the element <\(unclosed.name)> is not closed") }
            guard hasRoot else { throw tokenizer.error("no <svg> element") }
        }

        private mutating func write(text: String) throws(XMLSyntaxError) {
            guard !open.isEmpty else {
                guard text.utf8.allSatisfy(XMLTokenizer.isWhitespace) else { throw tokenizer.error("text outside the root element") }
                output.append(contentsOf: text.utf8)
                return
            }
            guard droppedDepth == 0 else { return }
            if styleSheet != nil {
                styleSheet? += text
            } else {
                Self.escape(text, into: &output, inAttribute: false)
            }
        }

        private mutating func start(_ tag: XMLStartTag) throws(XMLSyntaxError) {
            if open.isEmpty {
                guard !hasRoot else { throw tokenizer.error("a second root element <\(tag.name)>") }
                guard tag.localName == "svg" else { throw tokenizer.error("the root element is <\(tag.name)>, not <svg>") }
                hasRoot = true
            }
            let isKept = droppedDepth == 0 && styleSheet == nil && SVGSanitizer.keeps(tag)
            if isKept {
                output.append(UInt8(ascii: "<"))
                output.append(contentsOf: tag.name.utf8)
                for attribute in tag.attributes {
                    guard let value = SVGSanitizer.sanitizedValue(of: attribute, in: tag, embeddedImages: embeddedImages) else { continue }
                    output.append(UInt8(ascii: " "))
                    output.append(contentsOf: attribute.name.utf8)
                    output.append(contentsOf: "=\"".utf8)
                    Self.escape(value, into: &output, inAttribute: true)
                    output.append(UInt8(ascii: "\""))
                }
                output.append(contentsOf: (tag.isEmpty ? "/>" : ">").utf8)
            }
            guard !tag.isEmpty else { return }
            open.append((tag.name, isKept))
            if !isKept { droppedDepth += 1 }
            if isKept, tag.localName == "style" { styleSheet = "" }
        }

        private mutating func end(_ name: String) throws(XMLSyntaxError) {
            guard let element = open.popLast() else { throw tokenizer.error("</\(name)> closes no element") }
            guard element.name == name else { throw tokenizer.error("</\(name)> does not close <\(element.name)>") }
            guard element.isKept else {
                droppedDepth -= 1
                return
            }
            if let sheet = styleSheet {
                Self.escape(CSSSanitizer.sanitized(sheet) ?? "", into: &output, inAttribute: false)
                styleSheet = nil
            }
            output.append(contentsOf: "</\(name)>".utf8)
        }

        /// Writes `text` with `&`, `<` and `>` (and, in an attribute, quotes
        /// and whitespace characters) as references.
        static func escape(_ text: String, into output: inout [UInt8], inAttribute: Bool) {
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
                case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
                case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
                case UInt8(ascii: "\"") where inAttribute: output.append(contentsOf: "&quot;".utf8)
                case 0x09 where inAttribute: output.append(contentsOf: "&#9;".utf8)
                case 0x0A where inAttribute: output.append(contentsOf: "&#10;".utf8)
                case 0x0D: output.append(contentsOf: "&#13;".utf8)
                default: output.append(byte)
                }
            }
        }
    }
}
