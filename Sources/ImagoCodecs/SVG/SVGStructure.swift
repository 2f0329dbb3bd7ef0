import Foundation

/// What rendering an SVG document will cost, read from its elements
/// without rendering it, for ``SVGDecoder/Limits`` to bound: how many
/// elements it draws once every reference is followed, how many filter
/// primitives run, how much text is laid out, how deep it nests, the
/// images it embeds, and filter parameters librsvg cannot take.
///
/// A reference is a link to a fragment (`<use href="#a">`, `<feImage>`,
/// a gradient's or pattern's `href`) or a `url(#a)` in an attribute or a
/// `style`. Following one draws the element it names again, with its
/// content and its own references: ten `<use>`s of a group of ten
/// `<use>`s of ... nine levels down draw a billion elements ("billion
/// laughs" without entities), which ``cost`` counts before librsvg
/// starts. A marker is drawn at every vertex of the shape that refers to
/// it: its cost is multiplied by the shape's numbers (a bound on its
/// vertices). A reference that comes back to an element being drawn
/// counts nothing, as librsvg draws nothing for it. A `url(#a)` in a
/// `<style>` sheet may apply to every element (a marker, to every vertex),
/// and is counted so.
struct SVGStructure {
    /// What drawing an element (or the document) costs, counted in three
    /// measures; each at most ``SVGStructure/countLimit``.
    struct Cost: Equatable {
        /// Elements drawn.
        var elements = 0
        /// Filter primitives run.
        var filterRuns = 0
        /// Text laid out: a text node of n characters costs (n + 64)²,
        /// as librsvg 2.54's layout time grows with the square of a node's
        /// length, and a short node costs about as much as 64 characters.
        var text = 0

        /// The sum, each measure at most the count limit.
        static func + (left: Cost, right: Cost) -> Cost {
            Cost(
                elements: min(left.elements + right.elements, countLimit), filterRuns: min(left.filterRuns + right.filterRuns, countLimit),
                text: min(left.text + right.text, countLimit))
        }

        /// `times` times the cost, each measure at most the count limit.
        func times(_ times: Int) -> Cost {
            Cost(elements: product(elements, times), filterRuns: product(filterRuns, times), text: product(text, times))
        }

        /// The cost at the count limit in every measure.
        static let limit = Cost(elements: countLimit, filterRuns: countLimit, text: countLimit)
    }

    /// The size the root element declares.
    var intrinsicSize = SVGIntrinsicSize(width: 300, height: 150)
    var elementCount = 0
    /// The deepest nesting of elements, the root at 1.
    var depth = 0
    /// What drawing the document costs, every reference followed.
    var cost = Cost()
    /// The images embedded as data URLs in `href`s, decoded, once each.
    var embeddedImages: [Data] = []
    /// Why librsvg cannot draw the document, when a filter primitive has
    /// parameters it cannot take; nil when none has.
    var unsupportedFilter: String?

    /// Where the counts stop: past any limit, and far from overflow.
    static let countLimit = 1 << 40
    /// The most octaves of `feTurbulence`: each costs a pass over the
    /// region, and past ten they change nothing an 8-bit pixel shows.
    static let maximumOctaves = 10
    /// The most taps of an `feConvolveMatrix` (its order's product):
    /// librsvg 2.54 aborts the process on a larger kernel.
    static let maximumConvolveTaps = 400

    /// The elements as read: name, children, references, vertices, own cost.
    struct Element {
        var name: Substring
        var children: [Int] = []
        var references: [String] = []
        /// The numbers of its `d` or `points`: at least its vertices, where
        /// markers are drawn.
        var vertices = 0
        /// What drawing it costs, its content and references left out.
        var cost = Cost(elements: 1)
    }

    /// Reads `data`, which the sanitiser has written (so well formed);
    /// stops reading, with the cost at its limit, once it holds more than
    /// `maximumElementCount` elements.
    init(scanning data: Data, maximumElementCount: Int = .max) throws(XMLSyntaxError) {
        var tokenizer = XMLTokenizer(data)
        var elements: [Element] = []
        var ids: [String: Int] = [:]
        var open: [Int] = []
        var sheetReferences: [String] = []
        var embedded = Set<String>()
        var inStyle = false
        var textDepth = 0
        while let token = try tokenizer.next() {
            switch token {
            case .startTag(let tag):
                if elements.isEmpty { intrinsicSize = SVGIntrinsicSize(root: tag) }
                guard elements.count < maximumElementCount else {
                    (elementCount, cost) = (elements.count + 1, .limit)
                    return
                }
                let index = elements.count
                var element = Element(name: tag.localName)
                read(tag, into: &element)
                for attribute in tag.attributes {
                    if attribute.localName == "id", ids[attribute.value] == nil { ids[attribute.value] = index }
                    if attribute.localName == "href", tag.localName != "a" {
                        if attribute.value.hasPrefix("#") {
                            element.references.append(String(attribute.value.dropFirst()))
                        } else if embedded.insert(attribute.value).inserted, let image = Self.dataURLPayload(attribute.value) {
                            embeddedImages.append(image)
                        }
                    } else if ASCIISearch.contains("url(", in: attribute.value) {
                        element.references += CSSSanitizer.fragmentReferences(in: attribute.value)
                    }
                }
                if let parent = open.last { elements[parent].children.append(index) }
                elements.append(element)
                if !tag.isEmpty {
                    open.append(index)
                    depth = max(depth, open.count)
                    inStyle = tag.localName == "style"
                    if tag.localName == "text" { textDepth += 1 }
                }
            case .endTag:
                if let closed = open.popLast(), elements[closed].name == "text" { textDepth -= 1 }
                inStyle = false
            case .text(let text, _) where inStyle:
                sheetReferences += CSSSanitizer.fragmentReferences(in: text)
            case .text(let text, _) where textDepth > 0:
                if let parent = open.last {
                    let length = text.unicodeScalars.count + 64
                    elements[parent].cost.text = min(elements[parent].cost.text + Self.product(length, length), Self.countLimit)
                }
            default:
                break
            }
        }
        elementCount = elements.count
        cost = Self.cost(of: elements, ids: ids, sheetReferences: sheetReferences)
    }

    /// Takes what `tag`'s own attributes say about its cost: the vertices
    /// of a shape, a filter primitive's run, and parameters librsvg cannot
    /// take (the first is kept).
    private mutating func read(_ tag: XMLStartTag, into element: inout Element) {
        switch tag.localName {
        case "path", "polyline", "polygon":
            element.vertices = Self.numberCount(tag.value(of: tag.localName == "path" ? "d" : "points") ?? "")
        case "line":
            element.vertices = 2
        case "feTurbulence":
            let octaves = tag.value(of: "numOctaves").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } ?? 1
            if octaves > Double(Self.maximumOctaves), unsupportedFilter == nil {
                unsupportedFilter = "feTurbulence has numOctaves=\(octaves), over the limit of \(Self.maximumOctaves)"
            }
        case "feConvolveMatrix":
            let order = (tag.value(of: "order") ?? "3").split { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" }.map { Double($0) ?? 0 }
            let taps = (order.first ?? 3) * (order.count > 1 ? order[1] : order.first ?? 3)
            if !(taps <= Double(Self.maximumConvolveTaps)), unsupportedFilter == nil {
                unsupportedFilter = "feConvolveMatrix has order=\(tag.value(of: "order") ?? ""), over librsvg's \(Self.maximumConvolveTaps) taps"
            }
        default:
            break
        }
        if Self.filterPrimitives.contains(tag.localName) { element.cost.filterRuns = 1 }
    }

    /// `a` times `b`, at most ``countLimit``.
    static func product(_ a: Int, _ b: Int) -> Int {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? countLimit : min(product, countLimit)
    }

    /// How many numbers `text` holds (runs of digits, a `.` starting a new
    /// one after another `.`, as path data packs them: `1.5.5` is two).
    static func numberCount(_ text: String) -> Int {
        var count = 0
        var inNumber = false
        var hasPoint = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if !inNumber { (count, inNumber, hasPoint) = (count + 1, true, false) }
            case UInt8(ascii: "."):
                if !inNumber || hasPoint { (count, inNumber) = (count + 1, true) }
                hasPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                // An exponent continues the number.
                break
            default:
                inNumber = false
            }
        }
        return count
    }

    /// The bytes a `data:` URL holds (base64 or percent-encoded); nil for
    /// another URL or a payload that does not decode.
    static func dataURLPayload(_ link: String) -> Data? {
        guard SVGSanitizer.dataURLMediaType(link) != nil, let comma = link.firstIndex(of: ",") else { return nil }
        let header = link[..<comma].lowercased()
        let payload = link[link.index(after: comma)...]
        if header.hasSuffix(";base64") {
            return Data(base64Encoded: String(payload.filter { !$0.isWhitespace }), options: .ignoreUnknownCharacters)
        }
        var bytes: [UInt8] = []
        var iterator = Array(payload.utf8)[...]
        while let byte = iterator.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard iterator.count >= 2, let value = UInt8(String(decoding: iterator.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            iterator = iterator.dropFirst(2)
        }
        return Data(bytes)
    }
}
