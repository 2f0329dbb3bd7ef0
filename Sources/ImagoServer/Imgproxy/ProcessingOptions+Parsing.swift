import Foundation
import ImagoCodecs

extension ProcessingOptions {
    /// One option as a URL spells it: its name, then its arguments, all
    /// separated by colons (`rs:fill:300::1`).
    public struct Option: Sendable, Hashable, CustomStringConvertible {
        public var name: String
        public var arguments: [String]

        /// The option in `segment`; nil for a segment without a colon,
        /// which is where imgproxy's options end and the source begins.
        public init?(_ segment: some StringProtocol) {
            let parts = Substring(segment).pieces(separatedBy: ":")
            guard parts.count > 1 else { return nil }
            name = String(parts[0])
            arguments = parts[1...].map { String($0) }
        }

        public var description: String { ([name] + arguments).joined(separator: ":") }
    }

    /// Reads option segments as imgproxy does: each in order, a later one
    /// overriding what an earlier one set, after the `default` preset.
    public struct Parser: Sendable {
        public var presets: Presets
        /// Whether URLs may set ``SourceLimits`` (`msr`, `msfs`, `maf`,
        /// `mafr`, `mrd`); else those options are a 403.
        public var allowsSourceLimits: Bool
        /// The Unix time `expires` is checked against.
        public var now: @Sendable () -> Int

        public init(
            presets: Presets = Presets(), allowsSourceLimits: Bool = false, now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
        ) {
            self.presets = presets
            self.allowsSourceLimits = allowsSourceLimits
            self.now = now
        }

        /// The options `segments` ask for. Throws the first bad option.
        public func options(_ segments: some Sequence<some StringProtocol>) throws(OptionError) -> ProcessingOptions {
            var options = try defaults()
            for segment in segments {
                guard let option = Option(segment) else {
                    throw OptionError(option: String(segment), reason: "expected name:arguments")
                }
                try options.apply(option, parser: self, presetChain: [])
            }
            return options
        }

        /// The options of the presets `names` (the presets-only form, whose
        /// first segment is `name:name:...`).
        public func options(presetNames names: [String]) throws(OptionError) -> ProcessingOptions {
            var options = try defaults()
            try options.applyPresets(names, parser: self, presetChain: [])
            return options
        }

        private func defaults() throws(OptionError) -> ProcessingOptions {
            var options = ProcessingOptions()
            if presets.definitions["default"] != nil {
                try options.applyPresets(["default"], parser: self, presetChain: [])
            }
            return options
        }
    }

    /// The largest width, height or padding a URL may give, in pixels:
    /// far above any screen, and small enough that no arithmetic overflows.
    public static let largestSide = 100_000

    /// Applies one option, by imgproxy's rules for its arguments (an empty
    /// argument keeps the default where imgproxy allows it).
    mutating func apply(_ option: Option, parser: Parser, presetChain: [String]) throws(OptionError) {
        let arguments = OptionArguments(option)
        switch option.name {
        case "resize", "rs":
            try arguments.count(1...8)
            if !arguments[0].isEmpty { resizingType = try arguments.resizingType(0) }
            try applySize(arguments.dropFirst())
        case "size", "s": try applySize(arguments)
        case "resizing_type", "rt": resizingType = try arguments.onlyResizingType()
        case "width", "w": width = try arguments.onlyDimension()
        case "height", "h": height = try arguments.onlyDimension()
        case "min-width", "mw": minWidth = try arguments.onlyDimension()
        case "min-height", "mh": minHeight = try arguments.onlyDimension()
        case "zoom", "z":
            try arguments.count(1...2)
            zoomWidth = try arguments.number(0, where: { $0 > 0 && $0 <= 100 }, "a number above 0, at most 100")
            zoomHeight = arguments.count > 1 ? try arguments.number(1, where: { $0 > 0 && $0 <= 100 }, "a number above 0, at most 100") : zoomWidth
        case "dpr": dpr = try arguments.onlyNumber(where: { $0 > 0 && $0 <= 8 }, "a number above 0, at most 8")
        case "enlarge", "el": enlarge = try arguments.onlyBool()
        case "extend", "ex": try arguments.extend(&extend)
        case "extend_aspect_ratio", "extend_ar", "exar": try arguments.extend(&extendAspectRatio)
        case "gravity", "g": gravity = try arguments.gravity(from: 0, allowing: .crop)
        case "crop", "c":
            let fraction = "0 or more (pixels, or a fraction of the side below 1)"
            crop.width = try arguments.number(0, where: { $0 >= 0 && $0 <= Double(Self.largestSide) }, fraction)
            if arguments.count > 1 { crop.height = try arguments.number(1, where: { $0 >= 0 && $0 <= Double(Self.largestSide) }, fraction) }
            if arguments.count > 2 { crop.gravity = try arguments.gravity(from: 2, allowing: .crop) }
        case "trim", "t": try arguments.trim(&trim)
        case "padding", "pd": try arguments.padding(&padding)
        case "auto_rotate", "ar": autoRotate = try arguments.onlyBool()
        case "rotate", "rot":
            try arguments.count(1...1)
            guard let degrees = Int(arguments[0]), degrees % 90 == 0, abs(degrees) <= 3_600 else {
                throw arguments.error("expected a multiple of 90")
            }
            rotate = (degrees % 360 + 360) % 360
        case "flip", "fl":
            try arguments.count(1...2)
            if !arguments[0].isEmpty { flipHorizontal = arguments.bool(0) }
            if arguments.count > 1, !arguments[1].isEmpty { flipVertical = arguments.bool(1) }
        case "background", "bg": try arguments.background(flatten: &flatten, color: &background)
        case "blur", "bl": blur = try arguments.onlyNumber(where: { $0 >= 0 && $0 <= 1_000 }, "a sigma from 0 to 1000")
        case "sharpen", "sh": sharpen = try arguments.onlyNumber(where: { $0 >= 0 && $0 <= 1_000 }, "a sigma from 0 to 1000")
        case "pixelate", "pix": pixelate = try arguments.onlyInteger(in: 0...Self.largestSide)
        case "watermark", "wm": try arguments.watermark(&watermark)
        case "strip_metadata", "sm": stripMetadata = try arguments.onlyBool()
        case "keep_copyright", "kcr": keepCopyright = try arguments.onlyBool()
        case "strip_color_profile", "scp": stripColorProfile = try arguments.onlyBool()
        case "enforce_thumbnail", "eth": enforceThumbnail = try arguments.onlyBool()
        case "quality", "q": quality = try arguments.onlyInteger(in: 0...100)
        case "format_quality", "fq":
            guard arguments.count % 2 == 0 else { throw arguments.error("expected format:quality pairs") }
            for index in stride(from: 0, to: arguments.count, by: 2) {
                formatQuality[try arguments.format(index)] = try arguments.integer(index + 1, in: 0...100)
            }
        case "max_bytes", "mb": maxBytes = try arguments.onlyInteger(in: 0...Int(Int32.max))
        case "format", "f", "ext": format = try arguments.onlyFormat()
        case "page", "pg": page = try arguments.onlyInteger(in: 0...Int(Int32.max))
        case "skip_processing", "skp":
            for index in 0..<arguments.count { skipProcessing.insert(try arguments.format(index)) }
        case "raw": raw = try arguments.onlyBool()
        case "cachebuster", "cb":
            try arguments.count(1...1)
            cacheBuster = arguments[0]
        case "expires", "exp":
            try arguments.count(1...1)
            guard let time = Int(arguments[0]) else { throw arguments.error("expected a Unix time") }
            if time > 0, time < parser.now() { throw OptionError(option: option.description, reason: "the URL has expired", kind: .expired) }
            expires = time
        case "filename", "fn":
            try arguments.count(1...2)
            filename = arguments[0]
            if arguments.count > 1, arguments.bool(1) {
                guard let bytes = URLSigning.bytes(base64URL: arguments[0]), let decoded = String(validating: bytes, as: UTF8.self) else {
                    throw arguments.error("the file name is not base64url of UTF-8 text")
                }
                filename = decoded
            }
        case "return_attachment", "att": returnAttachment = try arguments.onlyBool()
        case "preset", "pr": try applyPresets(arguments.values, parser: parser, presetChain: presetChain)
        case "max_src_resolution", "msr", "max_src_file_size", "msfs", "max_animation_frames", "maf", "max_animation_frame_resolution", "mafr",
            "max_result_dimension", "mrd":
            // The operator's presets may set them; URLs only where allowed.
            guard parser.allowsSourceLimits || !presetChain.isEmpty else {
                throw OptionError(option: option.description, reason: "this server does not let URLs set source limits", kind: .forbidden)
            }
            try applySourceLimit(arguments)
        case "imago_grayscale", "imago_gray":
            try arguments.count(1...2)
            grayscale = arguments.bool(0)
            guard arguments.count == 1 || ["601", "709"].contains(arguments[1]) else { throw arguments.error("the standard is 601 or 709") }
            grayscaleWeights = arguments.count == 2 && arguments[1] == "601" ? .rec601 : .rec709
        case "imago_radius": cornerRadius = try arguments.onlyInteger(in: 0...4_096)
        case "saturation", "sa", "imago_brightness", "imago_contrast", "imago_rgb", "imago_noise", "imago_equalize", "imago_convolution",
            "imago_curve", "imago_colorize":
            let (kind, effect) = try arguments.adjustment()
            adjustments[kind] = effect
        default: throw OptionError(option: option.description, reason: "unknown option")
        }
    }

    /// `s`'s arguments: width, height, enlarge, then extend and its gravity.
    private mutating func applySize(_ arguments: OptionArguments) throws(OptionError) {
        try arguments.count(0...7)
        if arguments.count > 0, !arguments[0].isEmpty { width = try arguments.dimension(0) }
        if arguments.count > 1, !arguments[1].isEmpty { height = try arguments.dimension(1) }
        if arguments.count > 2, !arguments[2].isEmpty { enlarge = arguments.bool(2) }
        if arguments.count > 3, !arguments[3].isEmpty { try arguments.dropFirst(3).extend(&extend) }
    }

    mutating func applyPresets(_ names: [String], parser: Parser, presetChain: [String]) throws(OptionError) {
        for name in names {
            guard let preset = parser.presets.definitions[name] else { throw OptionError(option: "pr:\(name)", reason: "unknown preset") }
            // A preset naming itself, directly or not, is skipped there, as imgproxy does.
            guard !presetChain.contains(name) else { continue }
            usedPresets.append(name)
            for option in preset { try apply(option, parser: parser, presetChain: presetChain + [name]) }
        }
    }

    private mutating func applySourceLimit(_ arguments: OptionArguments) throws(OptionError) {
        try arguments.count(1...1)
        let megapixels = "a number of megapixels above 0"
        switch arguments.option.name {
        case "max_src_resolution", "msr":
            sourceLimits.maximumPixelCount = Int(try arguments.number(0, where: { $0 > 0 && $0 <= 1_000_000 }, megapixels) * 1_000_000)
        case "max_src_file_size", "msfs": sourceLimits.maximumFileSize = try arguments.integer(0, in: 1...Int.max)
        case "max_animation_frames", "maf": sourceLimits.maximumAnimationFrames = try arguments.integer(0, in: 1...Int(Int32.max))
        case "max_animation_frame_resolution", "mafr":
            sourceLimits.maximumAnimationFramePixels = Int(try arguments.number(0, where: { $0 > 0 && $0 <= 1_000_000 }, megapixels) * 1_000_000)
        default: sourceLimits.maximumResultDimension = try arguments.integer(0, in: 1...Self.largestSide)
        }
    }
}
