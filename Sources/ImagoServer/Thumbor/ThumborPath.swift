import Foundation
import ImagoCodecs

/// A thumbor URL's path, read as thumbor 7.8 reads it: the signature (or
/// `unsafe`), then optional parts in a fixed order, each followed by a
/// slash, then the image:
///
///     /{hmac|unsafe}/[debug/][meta/][trim[:top-left|:bottom-right][:tolerance]/][AxB:CxD/]
///       [adaptive-][full-]fit-in/][-]Wx[-]H/[left|center|right/][top|middle|bottom/]
///       [smart/][filters:f(a,b):g()/]IMAGE
///
/// A part out of order, or malformed, is not an option: it and everything
/// after it are the image, as in thumbor (whose source then is not found).
/// The parts are matched on the path as sent (still percent-encoded);
/// filters and the image are decoded after.
struct ThumborPath: Sendable, Equatable {
    /// How `fit-in` fits the image to the box.
    struct FitIn: Sendable, Equatable {
        /// `adaptive-`: the box is turned to the image's orientation.
        var isAdaptive = false
        /// `full-`: the image covers the box rather than fitting inside it.
        var isFull = false
    }

    /// One side of the requested size.
    enum Side: Sendable, Equatable {
        /// Pixels; 0 keeps the aspect ratio (or, both 0, the size).
        case pixels(Int)
        /// `orig`: the image's own side.
        case original
    }

    /// `trim`: the border of the reference corner's colour, within `tolerance`, is cut.
    struct Trim: Sendable, Equatable {
        var fromBottomRight = false
        var tolerance = 0
    }

    /// `AxB:CxD`: the rectangle cut before anything else; right and bottom exclusive.
    struct Crop: Sendable, Equatable {
        var left: Int
        var top: Int
        var right: Int
        var bottom: Int
    }

    enum HorizontalAlign: String, Sendable { case left, center, right }
    enum VerticalAlign: String, Sendable { case top, middle, bottom }

    /// The signature segment (percent-decoded); nil for `unsafe`.
    var signature: String?
    /// What the signature covers: the path after the signature segment and
    /// its slash, as sent.
    var signedText: Substring
    /// `debug/`: no crop, resize or flip (thumbor outlines the focal points instead).
    var isDebug = false
    var isMeta = false
    var trim: Trim?
    var crop: Crop?
    var fitIn: FitIn?
    var width = Side.pixels(0)
    var height = Side.pixels(0)
    var flipsHorizontally = false
    var flipsVertically = false
    var horizontalAlign = HorizontalAlign.center
    var verticalAlign = VerticalAlign.middle
    var isSmart = false
    /// The filter list, percent-decoded, without `filters:`; empty without one.
    var filters = ""
    /// The image as sent (percent-encoded).
    var image: Substring

    /// Why a path is not a thumbor URL at all (thumbor answers 400).
    struct Malformed: Error, Equatable, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// Reads `path` (the request's path without its query).
    init(_ path: Substring) throws(Malformed) {
        var rest = path.first == "/" ? path.dropFirst() : path
        // The signature: `unsafe`, or the first segment, when a non-empty image follows.
        guard let slash = rest.firstIndex(of: "/"), rest.index(after: slash) < rest.endIndex, slash > rest.startIndex else {
            throw Malformed(reason: "the URL has neither a signature nor unsafe")
        }
        let first = rest[..<slash]
        signature = first == "unsafe" ? nil : Self.percentDecoded(first)
        if let signature, signature.isEmpty { throw Malformed(reason: "the signature does not decode") }
        rest = rest[rest.index(after: slash)...]
        signedText = rest
        image = rest
        // Each part is taken only if a non-empty image is left after it, as the pattern backtracks.
        func take<Value>(_ read: (Substring) -> Value?) -> Value? {
            guard let slash = rest.firstIndex(of: "/"), rest.index(after: slash) < rest.endIndex, let value = read(rest[..<slash]) else {
                return nil
            }
            rest = rest[rest.index(after: slash)...]
            return value
        }
        isDebug = take { $0 == "debug" ? true : nil } ?? false
        isMeta = take { $0 == "meta" ? true : nil } ?? false
        trim = take(Self.trim)
        crop = take(Self.crop)
        fitIn = take(Self.fitIn)
        if let size = take(Self.size) { (width, flipsHorizontally, height, flipsVertically) = size }
        horizontalAlign = take { HorizontalAlign(rawValue: String($0)) } ?? .center
        verticalAlign = take { VerticalAlign(rawValue: String($0)) } ?? .middle
        isSmart = take { $0 == "smart" ? true : nil } ?? false
        if let (list, after) = Self.filterList(rest) {
            filters = Self.percentDecoded(list) ?? String(list)
            rest = after
        }
        image = rest
    }

    /// `trim`, `trim:top-left`, `trim:bottom-right`, each optionally `:digits`.
    private static func trim(_ segment: Substring) -> Trim? {
        let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard parts[0] == "trim", parts.count <= 3 else { return nil }
        var trim = Trim()
        var index = 1
        if index < parts.count, parts[index] == "top-left" || parts[index] == "bottom-right" {
            trim.fromBottomRight = parts[index] == "bottom-right"
            index += 1
        }
        if index < parts.count {
            guard let tolerance = digits(parts[index]) else { return nil }
            // thumbor reads a lone number as the corner (any but top-left is bottom-right) and no tolerance.
            if index == 1 {
                trim.fromBottomRight = true
            } else {
                trim.tolerance = tolerance
            }
            index += 1
        }
        return index == parts.count ? trim : nil
    }

    /// `AxB:CxD`, four unsigned integers.
    static func crop(_ segment: Substring) -> Crop? {
        let corners = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        let numbers = corners.flatMap { $0.split(separator: "x", omittingEmptySubsequences: false) }
        guard numbers.count == 4 else { return nil }
        let values = numbers.compactMap(digits)
        guard values.count == 4 else { return nil }
        return Crop(left: values[0], top: values[1], right: values[2], bottom: values[3])
    }

    /// `fit-in`, `adaptive-fit-in`, `full-fit-in`, `adaptive-full-fit-in`.
    private static func fitIn(_ segment: Substring) -> FitIn? {
        var rest = segment
        var fit = FitIn()
        if rest.hasPrefix("adaptive-") {
            fit.isAdaptive = true
            rest = rest.dropFirst("adaptive-".count)
        }
        if rest.hasPrefix("full-") {
            fit.isFull = true
            rest = rest.dropFirst("full-".count)
        }
        return rest == "fit-in" ? fit : nil
    }

    /// `[-]W x [-]H`, each side digits, `orig` or nothing.
    private static func size(_ segment: Substring) -> (Side, Bool, Side, Bool)? {
        let sides = segment.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2 else { return nil }
        func side(_ text: Substring) -> (Side, Bool)? {
            let flips = text.first == "-"
            let value = flips ? text.dropFirst() : text
            if value.isEmpty { return (.pixels(0), flips) }
            if value == "orig" { return (.original, flips) }
            return digits(value).map { (.pixels($0), flips) }
        }
        guard let width = side(sides[0]), let height = side(sides[1]) else { return nil }
        return (width.0, width.1, height.0, height.1)
    }

    /// `filters:…)` up to the first `)/` that leaves a non-empty image, and the rest.
    private static func filterList(_ rest: Substring) -> (Substring, Substring)? {
        guard rest.hasPrefix("filters:") else { return nil }
        let list = rest.dropFirst("filters:".count)
        var searchFrom = list.startIndex
        while let close = list[searchFrom...].firstRange(of: ")/") {
            let after = list[close.upperBound...]
            // The list is at least one character, ending in ")".
            if !after.isEmpty, close.lowerBound > list.startIndex {
                return (list[..<close.upperBound].dropLast(), after)
            }
            searchFrom = list.index(after: close.lowerBound)
        }
        return nil
    }

    /// A run of ASCII digits as a number; nil for anything else or a number too large.
    static func digits(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// `text` with its `%XX` escapes decoded; nil if they do not make UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        guard text.contains("%") else { return String(text) }
        return String(text).removingPercentEncoding
    }
}

extension ThumborPath {
    /// What thumbor's `extract_focal()` documents: when the image part is
    /// itself a thumbor URL (after an optional scheme and host), signed or
    /// `unsafe`, with a crop, the innermost such URL's image, and its crop
    /// as a focal region; the image parts of URLs without a crop are
    /// followed, ten deep at most. Nil when there is none. (thumbor 7.8
    /// reads the image part percent-encoded, where no crop's `:` matches,
    /// so it fetches the whole URL instead.)
    func extractedFocalRegion() -> (image: Substring, region: Crop)? {
        var text = Substring(Self.percentDecoded(image) ?? String(image))
        for _ in 0..<10 {
            // thumbor drops everything up to the first slash (the host, after any scheme).
            let scheme = ["http://", "https://"].first { text.hasPrefix($0) }
            let afterScheme = text.dropFirst(scheme?.count ?? 0)
            guard let slash = afterScheme.firstIndex(of: "/"), let inner = try? ThumborPath(afterScheme[afterScheme.index(after: slash)...])
            else { return nil }
            if let crop = inner.crop { return (inner.image, crop) }
            text = inner.image
        }
        return nil
    }
}

extension ThumborPath {
    /// The size an SVG source is rendered at, as thumbor asks CairoSVG for
    /// the URL's width and height (a side of 0, or `orig`, free; both free,
    /// the document's own size): filled for a crop and for `full-fit-in`
    /// and `adaptive-fit-in`, fitted for `fit-in`, so that the layout has
    /// the pixels it keeps without enlarging a small render. (CairoSVG fits
    /// the document inside the box, with margins where the ratios differ;
    /// Imago does not.)
    var svgRenderSize: (ImageSize?, ContentMode) {
        func side(_ side: Side) -> Int {
            guard case .pixels(let pixels) = side else { return 0 }
            return pixels == .min ? 0 : abs(pixels)
        }
        let size = ImageSize(width: side(width), height: side(height))
        guard size.width > 0 || size.height > 0 else { return (nil, .fill) }
        let fits = fitIn.map { !$0.isFull && !$0.isAdaptive } ?? false
        return (size, fits ? .fit : .fill)
    }
}
