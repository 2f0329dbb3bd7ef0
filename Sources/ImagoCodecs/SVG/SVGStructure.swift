import Foundation

/// What rendering an SVG document will cost, read from its elements
/// without rendering it, for ``SVGDecoder/Limits`` to bound: how many
/// elements it draws once every reference is followed, how many filter
/// primitives run, how deep it nests, and the images it embeds.
///
/// A reference is a link to a fragment (`<use href="#a">`, `<feImage>`,
/// a gradient's or pattern's `href`) or a `url(#a)` in an attribute or a
/// `style`. Following one draws the element it names again, with its
/// content and its own references: ten `<use>`s of a group of ten
/// `<use>`s of ... nine levels down draw a billion elements ("billion
/// laughs" without entities), which ``drawnElementCount`` counts before
/// librsvg starts. A reference that comes back to an element being drawn
/// counts nothing, as librsvg draws nothing for it. A `url(#a)` in a
/// `<style>` sheet may apply to every element, and is counted so.
struct SVGStructure {
    /// The size the root element declares.
    var intrinsicSize = SVGIntrinsicSize(width: 300, height: 150)
    var elementCount = 0
    /// The deepest nesting of elements, the root at 1.
    var depth = 0
    /// Elements drawn, each drawn again for every reference to it (or to
    /// an element holding it); at most ``countLimit``.
    var drawnElementCount = 0
    /// Filter primitives run, counted as elements are; at most ``countLimit``.
    var filterPrimitiveRuns = 0
    /// The images embedded as data URLs in `href`s, decoded, once each.
    var embeddedImages: [Data] = []

    /// Where the counts stop: past any limit, and far from overflow.
    static let countLimit = 1 << 40

    /// The filter primitives: each runs over its region once a use.
    private static let filterPrimitives: Set<Substring> = [
        "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix", "feDiffuseLighting", "feDisplacementMap",
        "feDropShadow", "feFlood", "feGaussianBlur", "feImage", "feMerge", "feMorphology", "feOffset", "feSpecularLighting", "feTile",
        "feTurbulence",
    ]

    /// Paint servers a style sheet may apply everywhere at no cost beyond the paint.
    private static let paintServers: Set<Substring> = ["linearGradient", "radialGradient", "solidcolor"]

    /// The elements as read: parent, id, references.
    private struct Element {
        var name: Substring
        var children: [Int] = []
        var references: [String] = []
    }

    /// Reads `data`, which the sanitiser has written (so well formed);
    /// stops reading, with the counts at their limit, once it holds more
    /// than `maximumElementCount` elements.
    init(scanning data: Data, maximumElementCount: Int = .max) throws(XMLSyntaxError) {
        var tokenizer = XMLTokenizer(data)
        var elements: [Element] = []
        var ids: [String: Int] = [:]
        var open: [Int] = []
        var sheetReferences: [String] = []
        var embedded = Set<String>()
        var inStyle = false
        while let token = try tokenizer.next() {
            switch token {
            case .startTag(let tag):
                if elements.isEmpty { intrinsicSize = SVGIntrinsicSize(root: tag) }
                guard elements.count < maximumElementCount else {
                    (elementCount, drawnElementCount, filterPrimitiveRuns) = (elements.count + 1, Self.countLimit, Self.countLimit)
                    return
                }
                let index = elements.count
                var element = Element(name: tag.localName)
                for attribute in tag.attributes {
                    if attribute.localName == "id", ids[attribute.value] == nil { ids[attribute.value] = index }
                    if attribute.localName == "href", tag.localName != "a" {
                        if attribute.value.hasPrefix("#") {
                            element.references.append(String(attribute.value.dropFirst()))
                        } else if embedded.insert(attribute.value).inserted, let image = Self.dataURLPayload(attribute.value) {
                            embeddedImages.append(image)
                        }
                    } else if attribute.value.range(of: "url(", options: .caseInsensitive) != nil {
                        element.references += CSSSanitizer.fragmentReferences(in: attribute.value)
                    }
                }
                if let parent = open.last { elements[parent].children.append(index) }
                elements.append(element)
                if !tag.isEmpty {
                    open.append(index)
                    depth = max(depth, open.count)
                    inStyle = tag.localName == "style"
                }
            case .endTag:
                open.removeLast()
                inStyle = false
            case .text(let text, _) where inStyle:
                sheetReferences += CSSSanitizer.fragmentReferences(in: text)
            default:
                break
            }
        }
        elementCount = elements.count
        count(elements, ids: ids, sheetReferences: sheetReferences)
    }

    /// Counts what the root draws, following references depth first
    /// (without recursion: a chain of references may be long).
    private mutating func count(_ elements: [Element], ids: [String: Int], sheetReferences: [String]) {
        guard !elements.isEmpty else { return }
        let edges = elements.map { element in element.children + element.references.compactMap { ids[$0] } }
        // 0: not reached, 1: being drawn, 2: counted.
        var state = [UInt8](repeating: 0, count: elements.count)
        var drawn = [Int](repeating: 0, count: elements.count)
        var runs = [Int](repeating: 0, count: elements.count)
        var stack: [(element: Int, edge: Int)] = [(0, 0)]
        state[0] = 1
        while let (element, edge) = stack.last {
            if edge < edges[element].count {
                stack[stack.count - 1].edge += 1
                let next = edges[element][edge]
                if state[next] == 0 {
                    state[next] = 1
                    stack.append((next, 0))
                }
                continue
            }
            var elementDrawn = 1
            var elementRuns = Self.filterPrimitives.contains(elements[element].name) ? 1 : 0
            for next in edges[element] where state[next] == 2 {
                elementDrawn = min(elementDrawn + drawn[next], Self.countLimit)
                elementRuns = min(elementRuns + runs[next], Self.countLimit)
            }
            (drawn[element], runs[element], state[element]) = (elementDrawn, elementRuns, 2)
            stack.removeLast()
        }
        drawnElementCount = drawn[0]
        filterPrimitiveRuns = runs[0]
        // A style sheet's reference may apply to every element.
        for target in sheetReferences.compactMap({ ids[$0] }) where !Self.paintServers.contains(elements[target].name) {
            let (moreDrawn, drawnOverflow) = drawn[target].multipliedReportingOverflow(by: elements.count)
            let (moreRuns, runsOverflow) = runs[target].multipliedReportingOverflow(by: elements.count)
            drawnElementCount = drawnOverflow ? Self.countLimit : min(drawnElementCount + moreDrawn, Self.countLimit)
            filterPrimitiveRuns = runsOverflow ? Self.countLimit : min(filterPrimitiveRuns + moreRuns, Self.countLimit)
        }
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
