import Foundation
import ImagoCodecs

/// One of thumbor's filters (`filters:name(arguments):…`), its arguments
/// checked as thumbor's patterns check them. Where thumbor silently skips
/// an unknown filter or one whose arguments do not match, Imago refuses
/// the URL with a 400 naming it.
enum ThumborFilter: Sendable, Equatable {
    /// A colour as `fill` and `background_color` take it: a CSS name or hex
    /// digits (`\w+`), or one of the words below.
    enum Fill: Sendable, Equatable {
        case color(String)
        /// The image's mean colour.
        case auto
        /// The image itself, blurred and stretched to the canvas.
        case blur
        case transparent
    }

    /// A watermark's position on one axis.
    enum Position: Sendable, Equatable {
        /// Pixels from the start, or, when `fromEnd` (a leading `-`), from the end.
        case pixels(Int, fromEnd: Bool)
        /// Percent of the image's side, from the start or the end.
        case percent(Int, fromEnd: Bool)
        case center
        case `repeat`
    }

    case quality(Int)
    /// nil: a format thumbor does not know, which resets an earlier one to the source's.
    case format(ProcessingOptions.Format?)
    case blur(radius: Int, sigma: Double)
    case sharpen(amount: Double, radius: Double, luminanceOnly: Bool)
    case grayscale
    case roundCorner(horizontal: Int, vertical: Int, red: Int, green: Int, blue: Int, transparent: Bool)
    case fill(Fill, compositesTransparent: Bool)
    case backgroundColor(Fill)
    case rotate(Int)
    case upscale
    case noUpscale
    case proportion(Double)
    case stripICC
    case stripEXIF
    case maxBytes(Int)
    case focal(ThumborPath.Crop)
    case brightness(Int)
    case contrast(Int)
    case rgb(red: Int, green: Int, blue: Int)
    case noise(amount: Int, seed: Int)
    case watermark(url: String, x: Position, y: Position, alpha: Int, widthRatio: Int?, heightRatio: Int?)
    case maxAge(Int)
    case autoJPEG(Bool)
    /// A pixel operation of the model with no thumbor-specific behaviour:
    /// `saturation`, `equalize`, `convolution`, `curve`, `colorize`, and
    /// Imago's `pixelate`.
    case effect(Effect)
    /// Resize to the target without cropping to its aspect ratio.
    case stretch
    /// The crop of a thumbor URL given as the image taken as the focal region.
    case extractFocal
    /// The nine-patch image at `url` drawn as a frame.
    case frame(url: String)

    /// The filters of a `filters:` list, in order. Split as thumbor splits
    /// it, at each `):`; an unknown name or arguments that do not match are
    /// an error naming the filter.
    static func list(_ text: String) throws(OptionError) -> [ThumborFilter] {
        guard !text.isEmpty else { return [] }
        var pieces = text.components(separatedBy: "):")
        for index in pieces.indices.dropLast() { pieces[index] += ")" }
        var filters: [ThumborFilter] = []
        for piece in pieces {
            // "()" alone, as in `filters:()/`, is an empty list.
            if piece == "()" { continue }
            filters.append(try ThumborFilter(piece))
        }
        return filters
    }

    /// One filter: `name(arguments)`, nothing after the closing parenthesis.
    init(_ piece: String) throws(OptionError) {
        guard let open = piece.firstIndex(of: "("), piece.last == ")" else {
            throw OptionError(option: piece, reason: "a thumbor filter is name(arguments)")
        }
        let name = String(piece[..<open])
        let inside = piece[piece.index(after: open)..<piece.index(before: piece.endIndex)]
        var arguments = try Arguments(name: name, text: inside)
        func none() throws(OptionError) {
            guard arguments.isEmpty else { throw arguments.error("takes no arguments") }
        }
        switch name {
        case "quality": self = .quality(try arguments.unsigned())
        case "format":
            let format = try arguments.string()
            self = .format(["png", "jpeg", "jpg", "gif", "webp", "avif"].contains(format.lowercased()) ? .init(name: format.lowercased()) : nil)
        case "blur":
            let radius = try arguments.unsigned()
            guard radius > 0 else { throw arguments.error("the radius must be at least 1") }
            let sigma = try arguments.optional { (arguments: inout Arguments) throws(OptionError) in try arguments.decimal() } ?? 0
            self = .blur(radius: min(radius, 150), sigma: sigma == 0 ? Double(radius) : sigma)
        case "sharpen":
            self = .sharpen(amount: try arguments.decimal(), radius: try arguments.decimal(), luminanceOnly: try arguments.bool())
        case "grayscale":
            try none()
            self = .grayscale
        case "round_corner":
            let radii = try arguments.string().split(separator: "|", omittingEmptySubsequences: false)
            guard (1...2).contains(radii.count), let horizontal = ThumborPath.digits(radii[0]),
                let vertical = radii.count == 2 ? ThumborPath.digits(radii[1]) : horizontal
            else { throw arguments.error("the radius is a number or two, as a|b") }
            let (red, green, blue) = (try arguments.unsigned(), try arguments.unsigned(), try arguments.unsigned())
            guard red <= 255, green <= 255, blue <= 255 else { throw arguments.error("a colour component is over 255") }
            let transparent = try arguments.optional { (arguments: inout Arguments) throws(OptionError) in try arguments.bool() } ?? false
            self = .roundCorner(horizontal: horizontal, vertical: vertical, red: red, green: green, blue: blue, transparent: transparent)
        case "fill":
            let fill = try arguments.fill()
            self = .fill(
                fill,
                compositesTransparent: try arguments.optional { (arguments: inout Arguments) throws(OptionError) in try arguments.bool() } ?? false)
        case "background_color": self = .backgroundColor(try arguments.fill())
        case "rotate": self = .rotate(try arguments.integer())
        case "upscale":
            try none()
            self = .upscale
        case "no_upscale":
            try none()
            self = .noUpscale
        case "proportion": self = .proportion(try arguments.decimal())
        case "strip_icc":
            try none()
            self = .stripICC
        case "strip_exif":
            try none()
            self = .stripEXIF
        case "max_bytes": self = .maxBytes(try arguments.unsigned())
        case "focal":
            let text = try arguments.string()
            guard let box = ThumborPath.crop(Substring(text)), box.right > box.left, box.bottom > box.top else {
                throw arguments.error("the focal region is LxT:RxB, with a width and a height")
            }
            self = .focal(box)
        case "brightness": self = .brightness(try arguments.integer())
        case "contrast": self = .contrast(try arguments.integer())
        case "rgb": self = .rgb(red: try arguments.integer(), green: try arguments.integer(), blue: try arguments.integer())
        case "noise":
            let amount = try arguments.unsigned()
            self = .noise(
                amount: amount, seed: try arguments.optional { (arguments: inout Arguments) throws(OptionError) in try arguments.unsigned() } ?? 0)
        case "watermark":
            let url = try arguments.string()
            let (x, y) = (try arguments.position(), try arguments.position())
            let alpha = try arguments.unsigned()
            let widthRatio = try arguments.optional { (arguments: inout Arguments) throws(OptionError) in try arguments.ratio() } ?? nil
            let heightRatio = try arguments.optional { (arguments: inout Arguments) throws(OptionError) in try arguments.ratio() } ?? nil
            self = .watermark(url: url, x: x, y: y, alpha: alpha, widthRatio: widthRatio, heightRatio: heightRatio)
        case "max_age": self = .maxAge(try arguments.unsigned())
        case "autojpg": self = .autoJPEG(try arguments.optional { (arguments: inout Arguments) throws(OptionError) in try arguments.bool() } ?? true)
        case "saturation": self = .effect(.saturation(factor: try arguments.decimal()))
        case "equalize":
            try none()
            self = .effect(.equalize)
        case "convolution":
            let weights = try arguments.string()
            let columns = try arguments.unsigned()
            let normalizes = try arguments.optional { (arguments: inout Arguments) throws(OptionError) in try arguments.bool() } ?? true
            guard let convolution = Effect.convolution(weights: weights, columns: columns, normalizes: normalizes) else {
                throw arguments.error(Effect.kernelRule)
            }
            self = .effect(convolution)
        case "curve":
            let curves = try Self.curves(inside, name: name)
            arguments = try Arguments(name: name, text: "")
            self = .effect(.curve(all: curves[0], red: curves[1], green: curves[2], blue: curves[3]))
        case "colorize":
            let (red, green, blue) = (try arguments.unsigned(), try arguments.unsigned(), try arguments.unsigned())
            let hex = try arguments.string()
            guard hex.count == 6, let fill = Color(hexDigits: hex, allowingAlpha: false) else { throw arguments.error("the fill is six hex digits") }
            self = .effect(.colorize(red: red, green: green, blue: blue, fill: fill))
        case "pixelate": self = .effect(.pixelate(blockSize: min(try arguments.unsigned(), ProcessingOptions.largestSide)))
        case "stretch":
            try none()
            self = .stretch
        case "extract_focal":
            try none()
            self = .extractFocal
        case "frame": self = .frame(url: try arguments.string())
        default: throw OptionError(option: name, reason: "not a thumbor filter Imago knows")
        }
        guard arguments.isEmpty else { throw arguments.error("has more arguments than it takes") }
    }

    /// `curve()`'s four curves, `[(x,y),…]` each, split by commas: all
    /// channels', red's, green's, blue's. Each needs a point, its x
    /// increasing, every number from 0 to 255.
    static func curves(_ text: Substring, name: String) throws(OptionError) -> [[Effect.Point]] {
        let error = OptionError(option: "\(name)(\(text))", reason: "takes four curves [(x,y),…] of numbers from 0 to 255, x increasing")
        var curves: [[Effect.Point]] = []
        var rest = text.filter { $0 != " " }[...]
        while !rest.isEmpty {
            guard rest.first == "[", let close = rest.firstIndex(of: "]") else { throw error }
            let body = rest[rest.index(after: rest.startIndex)..<close]
            var points: [Effect.Point] = []
            for pair in body.split(separator: ")", omittingEmptySubsequences: true) {
                let numbers = pair.drop { $0 == "," || $0 == "(" }.split(separator: ",", omittingEmptySubsequences: false)
                guard numbers.count == 2, let x = UInt8(numbers[0]), let y = UInt8(numbers[1]) else { throw error }
                points.append(Effect.Point(x: x, y: y))
            }
            curves.append(points)
            rest = rest[rest.index(after: close)...]
            if rest.first == "," { rest = rest.dropFirst() }
        }
        guard curves.count == 4, ImageProcessors.ColorLookup.curve(all: curves[0], red: curves[1], green: curves[2], blue: curves[3]) != nil
        else { throw error }
        return curves
    }

    /// A filter's arguments, taken one at a time: each quoted (`'…'`) or
    /// the text up to the next comma, spaces around it dropped.
    struct Arguments {
        let name: String
        let text: Substring
        private var values: [Substring]

        init(name: String, text: Substring) throws(OptionError) {
            self.name = name
            self.text = text
            values = []
            var rest = text
            while !rest.isEmpty {
                rest = rest.drop { $0 == " " }
                if rest.first == "'" {
                    let body = rest.dropFirst()
                    guard let close = body.firstIndex(of: "'") else { throw OptionError(option: "\(name)(\(text))", reason: "a quote is not closed") }
                    values.append(body[..<close])
                    rest = body[body.index(after: close)...].drop { $0 == " " }
                    guard rest.isEmpty || rest.first == "," else {
                        throw OptionError(option: "\(name)(\(text))", reason: "text after a quoted argument")
                    }
                } else {
                    let end = rest.firstIndex(of: ",") ?? rest.endIndex
                    values.append(Substring(rest[..<end].trimmingCharacters(in: .whitespaces)))
                    rest = rest[end...]
                }
                guard rest.first == "," else { break }
                rest = rest.dropFirst()
                if rest.isEmpty { values.append("") }
            }
        }

        var isEmpty: Bool { values.allSatisfy(\.isEmpty) }

        func error(_ reason: String) -> OptionError { OptionError(option: "\(name)(\(text))", reason: reason) }

        private mutating func next(_ what: String) throws(OptionError) -> Substring {
            guard let first = values.first, !first.isEmpty else { throw error("\(what) is missing") }
            values.removeFirst()
            return first
        }

        /// An optional trailing argument: nil when absent or empty.
        mutating func optional<Value>(_ read: (inout Arguments) throws(OptionError) -> Value) throws(OptionError) -> Value? {
            guard let first = values.first else { return nil }
            if first.isEmpty {
                values.removeFirst()
                return nil
            }
            return try read(&self)
        }

        mutating func unsigned() throws(OptionError) -> Int {
            let text = try next("a number")
            guard let value = ThumborPath.digits(text) else { throw error("\"\(text)\" is not a whole number of 0 or more") }
            return value
        }

        mutating func integer() throws(OptionError) -> Int {
            let text = try next("a number")
            let negative = text.first == "-"
            guard let magnitude = ThumborPath.digits(negative ? text.dropFirst() : text) else { throw error("\"\(text)\" is not a whole number") }
            return negative ? -magnitude : magnitude
        }

        mutating func decimal() throws(OptionError) -> Double {
            let text = try next("a number")
            let unsigned = text.first == "-" ? text.dropFirst() : text
            let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.allSatisfy({ $0.isEmpty || ThumborPath.digits($0) != nil }), parts.contains(where: { !$0.isEmpty }),
                let value = Double(text.hasSuffix(".") ? text + "0" : text), value.isFinite
            else { throw error("\"\(text)\" is not a number") }
            return value
        }

        mutating func bool() throws(OptionError) -> Bool {
            let text = try next("true or false")
            switch text {
            case "True", "true", "1": return true
            case "False", "false", "0": return false
            default: throw error("\"\(text)\" is not true, false, 1 or 0")
            }
        }

        mutating func string() throws(OptionError) -> String { String(try next("an argument")) }

        mutating func fill() throws(OptionError) -> Fill {
            let text = try next("a colour")
            switch text {
            case "auto": return .auto
            case "blur": return .blur
            case "transparent": return .transparent
            default:
                // Letters, digits and _ only, as thumbor's pattern takes; a colour Pillow does not know is a 500 in thumbor.
                guard text.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" }),
                    Color(cssName: String(text)) != nil
                else { throw error("\"\(text)\" is not a CSS colour name or hex digits") }
                return .color(String(text))
            }
        }

        mutating func position() throws(OptionError) -> Position {
            let text = try next("a position")
            switch text {
            case "center": return .center
            case "repeat": return .repeat
            default:
                let fromEnd = text.first == "-"
                var digits = fromEnd ? text.dropFirst() : text
                let percent = digits.last == "p"
                if percent { digits = digits.dropLast() }
                guard let value = ThumborPath.digits(digits) else { throw error("\"\(text)\" is not a position (N, -N, Np, -Np, center, repeat)") }
                return percent ? .percent(value, fromEnd: fromEnd) : .pixels(value, fromEnd: fromEnd)
            }
        }

        /// A watermark size ratio: a percentage, or `none`.
        mutating func ratio() throws(OptionError) -> Int? {
            let text = try next("a ratio")
            if text == "none" { return nil }
            let negative = text.first == "-"
            guard let value = ThumborPath.digits(negative ? text.dropFirst() : text) else { throw error("\"\(text)\" is not a percentage or none") }
            return negative ? -value : value
        }
    }
}
