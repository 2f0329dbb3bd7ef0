import Foundation

/// What a URL asks to be done to its source image: the option segments
/// (`w:256`, `fit:crop`, `f:webp`, `gray`, ...) read, bounded and
/// normalised, so that two URLs asking for the same bytes get the same
/// ``cacheKey`` however they spell it.
public struct ProcessingOptions: Sendable, Hashable {
    /// How the image is fitted to the width and height.
    public enum Fit: String, Sendable, Hashable {
        /// Inside the box, aspect ratio kept (the default).
        case fit
        /// Covering the box, aspect ratio kept; may overflow on one side.
        case fill
        /// Covering the box, then cut to it, centred.
        case crop
    }

    /// The output format; `auto` chooses from the request's Accept header.
    public enum Format: String, Sendable, Hashable {
        case auto, jpeg, png, webp, avif
    }

    /// The box in output pixels (the dpr applied); 0 leaves a side free.
    public var width = 0
    public var height = 0
    public var fit = Fit.fit
    public var quality = 80
    public var format = Format.auto
    /// Gaussian blur radius in output pixels; 0 for none.
    public var blur = 0
    public var grayscale = false
    /// Rounded corners' radius in output pixels; 0 for none.
    public var cornerRadius = 0

    public init() {}

    /// The bounds every option is checked against.
    public enum Bounds {
        public static let side = 0...8192
        public static let devicePixelRatio = 1.0...4.0
        public static let quality = 1...100
        public static let blur = 0...100
        public static let cornerRadius = 0...4096
    }

    /// Reads option segments in order, a later one overriding an earlier
    /// one; `presets` expand `p:name` in place. Throws a 400-worthy error
    /// naming the first bad option.
    public init(segments: [Substring], presets: [String: [Substring]] = [:]) throws(OptionError) {
        var devicePixelRatio = 1.0
        for segment in Self.expand(segments, presets: presets, depth: 0) {
            let (name, value) = Self.split(segment)
            switch name {
            case "w", "width": width = try Self.integer(segment, value, in: Bounds.side)
            case "h", "height": height = try Self.integer(segment, value, in: Bounds.side)
            case "fit":
                guard let value, let parsed = Fit(rawValue: String(value)) else {
                    throw OptionError(option: String(segment), reason: "expected fit, fill or crop")
                }
                fit = parsed
            case "q", "quality": quality = try Self.integer(segment, value, in: Bounds.quality)
            case "f", "format":
                guard let value, let parsed = Format(rawValue: String(value)) else {
                    throw OptionError(option: String(segment), reason: "expected auto, jpeg, png, webp or avif")
                }
                format = parsed
            case "dpr":
                guard let value, let parsed = Double(value), Bounds.devicePixelRatio.contains(parsed) else {
                    throw OptionError(option: String(segment), reason: "expected a number from 1 to 4")
                }
                devicePixelRatio = parsed
            case "blur": blur = try Self.integer(segment, value, in: Bounds.blur)
            case "gray", "grayscale":
                guard value == nil || value == "1" || value == "true" else {
                    throw OptionError(option: String(segment), reason: "takes no value")
                }
                grayscale = true
            case "r", "radius": cornerRadius = try Self.integer(segment, value, in: Bounds.cornerRadius)
            case "p", "preset": throw OptionError(option: String(segment), reason: "unknown preset")
            default: throw OptionError(option: String(segment), reason: "unknown option")
            }
        }
        if devicePixelRatio != 1 {
            let scaled = [width, height, blur, cornerRadius].map { Int((Double($0) * devicePixelRatio).rounded()) }
            guard scaled[0] <= Bounds.side.upperBound, scaled[1] <= Bounds.side.upperBound else {
                throw OptionError(option: "dpr:\(devicePixelRatio)", reason: "makes the image larger than \(Bounds.side.upperBound) pixels a side")
            }
            (width, height) = (scaled[0], scaled[1])
            blur = min(scaled[2], Bounds.blur.upperBound * 4)
            cornerRadius = scaled[3]
        }
    }

    /// A canonical spelling of every field: equal exactly when the options are.
    public var cacheKey: String {
        "w\(width)h\(height)-\(fit.rawValue)-q\(quality)-\(format.rawValue)-b\(blur)-g\(grayscale ? 1 : 0)-r\(cornerRadius)"
    }

    /// `p:name` segments replaced by the preset's segments (presets may not nest deeply).
    private static func expand(_ segments: [Substring], presets: [String: [Substring]], depth: Int) -> [Substring] {
        segments.flatMap { segment -> [Substring] in
            guard depth < 4, case (let name, let value?) = split(segment), name == "p" || name == "preset",
                let preset = presets[String(value)]
            else { return [segment] }
            return expand(preset, presets: presets, depth: depth + 1)
        }
    }

    private static func split(_ segment: Substring) -> (Substring, Substring?) {
        guard let colon = segment.firstIndex(of: ":") else { return (segment, nil) }
        return (segment[..<colon], segment[segment.index(after: colon)...])
    }

    private static func integer(_ segment: Substring, _ value: Substring?, in bounds: ClosedRange<Int>) throws(OptionError) -> Int {
        guard let value, let parsed = Int(value), bounds.contains(parsed) else {
            throw OptionError(option: String(segment), reason: "expected a whole number from \(bounds.lowerBound) to \(bounds.upperBound)")
        }
        return parsed
    }
}

/// An option segment that is not allowed, and why: answered with 400.
public struct OptionError: Error, Equatable, CustomStringConvertible {
    public var option: String
    public var reason: String

    public var description: String { "bad option \"\(option)\": \(reason)" }
}
