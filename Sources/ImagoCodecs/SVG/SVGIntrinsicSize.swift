import Foundation

/// An SVG document's size as its root `<svg>` element declares it, in CSS
/// pixels (96 to the inch), as a browser sizes an `<img>` of it:
/// - `width` and `height` in absolute units (none, `px`, `in`, `cm`,
///   `mm`, `pt`, `pc`);
/// - one of them and the `viewBox`'s aspect ratio;
/// - without either, the `viewBox`'s own width and height;
/// - without any, 300x150, CSS's default size for a replaced element
///   (a missing side alone is 300 wide or 150 high).
///
/// Percentages and font-relative units (`em`, `ex`) count as missing: they
/// need a container. A side is at most ``maximumSide``, so that a huge
/// declared size becomes a pixel count that is refused, never a trap.
struct SVGIntrinsicSize: Equatable {
    /// The largest side taken, in pixels.
    static let maximumSide = 10_000_000.0

    var width: Double
    var height: Double

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// The size `root` declares.
    init(root: XMLStartTag) {
        let width = root.value(of: "width").flatMap(Self.length)
        let height = root.value(of: "height").flatMap(Self.length)
        let box = root.value(of: "viewBox").flatMap(Self.viewBox)
        switch (width, height, box) {
        case (let width?, let height?, _): (self.width, self.height) = (width, height)
        case (let width?, nil, let box?): (self.width, self.height) = (width, width * box.height / box.width)
        case (nil, let height?, let box?): (self.width, self.height) = (height * box.width / box.height, height)
        case (nil, nil, let box?): (self.width, self.height) = (box.width, box.height)
        default: (self.width, self.height) = (width ?? 300, height ?? 150)
        }
        self.width = min(max(self.width, 1 / 1024), Self.maximumSide)
        self.height = min(max(self.height, 1 / 1024), Self.maximumSide)
    }

    /// How far into a document its root element is looked for: a header
    /// is read for every request, and a document may be megabytes long.
    static let headerLength = 256 << 10

    /// The size of the first element of `data` if it is an `<svg>` within
    /// the first ``headerLength`` bytes; nil for data that does not read
    /// as XML up to it.
    init?(reading data: Data) {
        var tokenizer = XMLTokenizer(data.prefix(Self.headerLength))
        while let token = try? tokenizer.next() {
            guard case .startTag(let root) = token else { continue }
            guard root.localName == "svg" else { return nil }
            self.init(root: root)
            return
        }
        return nil
    }

    /// Whole pixels: each side rounded up, as librsvg advises (a partly
    /// covered pixel is still drawn).
    var pixelSize: ImageSize {
        ImageSize(width: max(1, Int(width.rounded(.up))), height: max(1, Int(height.rounded(.up))))
    }

    /// A length in pixels; nil for a relative unit, a value that is not a
    /// number, or one that is not positive.
    static func length(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let unitStart = trimmed.lastIndex { $0.isNumber || $0 == "." }.map { trimmed.index(after: $0) } ?? trimmed.startIndex
        guard let number = Double(trimmed[..<unitStart]), number.isFinite, number > 0 else { return nil }
        let factor: Double? =
            switch trimmed[unitStart...].lowercased() {
            case "", "px": 1
            case "in": 96
            case "cm": 96 / 2.54
            case "mm": 96 / 25.4
            case "pt": 96.0 / 72
            case "pc": 16
            default: nil
            }
        return factor.map { number * $0 }
    }

    /// The width and height of a `viewBox` (four numbers, separated by
    /// whitespace or commas); nil unless both are positive.
    static func viewBox(_ text: String) -> (width: Double, height: Double)? {
        let numbers = text.split { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" || $0 == "\r" }.map { Double($0) }
        guard numbers.count == 4, let width = numbers[2], let height = numbers[3], numbers.allSatisfy({ $0?.isFinite == true }),
            width > 0, height > 0
        else { return nil }
        return (width, height)
    }
}
