import Foundation
import ImagoCodecs

/// What an image URL asks to be done to its source, in imgproxy's terms:
/// every option of imgproxy's open-source edition, read by
/// ``ProcessingOptions/Parser`` from its URL form (`rs:fill:300:200`,
/// `g:sm`, `bg:fff`), plus Imago's own (`imago_gray`,
/// `imago_radius`). Each field holds imgproxy's default until an option
/// sets it, so two URLs that ask for the same bytes have the same
/// ``cacheKey`` however they spell it.
public struct ProcessingOptions: Sendable, Hashable {
    /// How the image is fitted to the width and height (`rt`).
    public enum ResizingType: String, Sendable, Hashable, CaseIterable {
        /// Inside the box, aspect ratio kept (the default).
        case fit
        /// Covering the box, aspect ratio kept, then cut to it.
        case fill
        /// As `fill`, but a box larger than the image shrinks to the
        /// image's size with the box's aspect ratio instead of enlarging.
        case fillDown = "fill-down"
        /// Exactly the box, aspect ratio not kept.
        case force
        /// `fill` when the image and the box have the same orientation
        /// (both landscape or both portrait), else `fit`.
        case auto
    }

    /// Which part of an image is kept by a crop, or where an image goes in
    /// a larger canvas (`g`, `c`'s gravity, `ex`, `wm`).
    public struct Gravity: Sendable, Hashable, CustomStringConvertible {
        /// The anchor, by its URL name.
        public enum Anchor: String, Sendable, Hashable, CaseIterable {
            case center = "ce"
            case north = "no"
            case south = "so"
            case east = "ea"
            case west = "we"
            case northEast = "noea"
            case northWest = "nowe"
            case southEast = "soea"
            case southWest = "sowe"
            /// The most interesting region, by Imago's saliency measure (crops only).
            case smart = "sm"
            /// A point given as fractions of the width and height (`fp:x:y`).
            case focusPoint = "fp"
            /// Tiled over the whole image (watermarks only).
            case replicate = "re"
        }

        public var anchor: Anchor
        /// The offset from the anchor: pixels (scaled by the dpr) when 1 or
        /// more in magnitude, else a fraction of the side; for a focus
        /// point, its position as a fraction (0...1) of the width.
        public var x: Double
        /// The same along the height.
        public var y: Double

        public init(_ anchor: Anchor, x: Double = 0, y: Double = 0) {
            self.anchor = anchor
            self.x = x
            self.y = y
        }

        public static let center = Gravity(.center)

        public var description: String { x == 0 && y == 0 ? anchor.rawValue : "\(anchor.rawValue):\(x):\(y)" }
    }

    /// An image format named in a URL (`f`, `@ext`, `.ext`, `fq`, `skp`).
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// Chosen from the request's Accept field (Imago's default).
        case auto
        case jpeg, png, webp, avif, gif, jxl, heic, bmp, tiff, ico, svg

        /// The format a URL's name stands for: imgproxy's names, `jpg` for
        /// JPEG, and `auto`.
        public init?(name: some StringProtocol) {
            if name == "jpg" {
                self = .jpeg
            } else {
                self.init(rawValue: String(name))
            }
        }
    }

    /// Growing the canvas to the requested size (`ex`) or aspect ratio (`exar`).
    public struct Extend: Sendable, Hashable {
        public var isEnabled = false
        /// Where the image sits in the larger canvas.
        public var gravity = Gravity.center
    }

    /// Cutting a region out of the source before it is scaled (`c`).
    public struct Crop: Sendable, Hashable {
        /// Pixels when 1 or more, a fraction of the side when less, 0 for
        /// the whole side.
        public var width = 0.0
        public var height = 0.0
        /// The region's gravity; nil follows the `g` option.
        public var gravity: Gravity?

        public var isEnabled: Bool { width > 0 || height > 0 }
    }

    /// Space added around the result, in pixels (scaled by the dpr) (`pd`).
    public struct Padding: Sendable, Hashable {
        public var top = 0
        public var right = 0
        public var bottom = 0
        public var left = 0

        public var isEmpty: Bool { top == 0 && right == 0 && bottom == 0 && left == 0 }
    }

    /// Cutting borders of one colour off the source (`t`).
    public struct Trim: Sendable, Hashable {
        public var isEnabled = false
        /// How far (0-255) a pixel may differ from the colour and still be border.
        public var threshold = 10.0
        /// The border's colour; nil takes the top-left pixel's.
        public var color: Color?
        public var equalHorizontal = false
        public var equalVertical = false
    }

    /// The operator's watermark image drawn over the result (`wm`).
    public struct Watermark: Sendable, Hashable {
        /// 0 to 1; 0 draws nothing.
        public var opacity = 1.0
        /// Whether a `wm` option asked for it with an opacity above 0.
        public var isEnabled = false
        public var position = Gravity.center
        /// The watermark's size as a fraction of the result's; 0 keeps its own size.
        public var scale = 0.0
    }

    /// Limits a URL may set for its own source where the operator allows it
    /// (`msr`, `msfs`, `maf`, `mafr`, `mrd`); nil keeps the operator's.
    /// A URL can only lower the operator's limits.
    public struct SourceLimits: Sendable, Hashable {
        public var maximumPixelCount: Int?
        public var maximumFileSize: Int?
        public var maximumAnimationFrames: Int?
        public var maximumAnimationFramePixels: Int?
        public var maximumResultDimension: Int?
    }

    // Size
    public var resizingType = ResizingType.fit
    /// The box in CSS pixels (before the dpr); 0 leaves a side free.
    public var width = 0
    public var height = 0
    public var minWidth = 0
    public var minHeight = 0
    public var zoomWidth = 1.0
    public var zoomHeight = 1.0
    public var dpr = 1.0
    public var enlarge = false
    public var extend = Extend()
    public var extendAspectRatio = Extend()
    // Position
    public var gravity = Gravity.center
    public var crop = Crop()
    public var trim = Trim()
    public var padding = Padding()
    public var autoRotate = true
    /// Clockwise degrees, a multiple of 90.
    public var rotate = 0
    public var flipHorizontal = false
    public var flipVertical = false
    /// Whether transparent pixels are filled with ``background`` (`bg`);
    /// they are anyway in a format without alpha.
    public var flatten = false
    /// What transparent pixels become when they are filled.
    public var background = Color.white
    // Effects
    /// Gaussian blur's sigma in pixels; 0 for none.
    public var blur = 0.0
    /// Sharpening's sigma; 0 for none.
    public var sharpen = 0.0
    /// Pixelation's block size in pixels; 0 or 1 for none.
    public var pixelate = 0
    public var watermark = Watermark()
    // Output
    /// 1-100; 0 takes ``formatQuality`` or the service's default.
    public var quality = 0
    /// Per-format qualities set by the URL (`fq`), over the service's.
    public var formatQuality: [Format: Int] = [:]
    /// The most bytes the answer may take; quality is lowered until it fits.
    public var maxBytes = 0
    public var format = Format.auto
    public var stripMetadata = true
    public var keepCopyright = true
    public var stripColorProfile = true
    public var enforceThumbnail = false
    /// The page of a multi-page source (TIFF) or frame of an animation
    /// answered, counted from 0 (`pg`); a page past 0 is answered as a still.
    public var page = 0
    // Behaviour
    /// Source formats answered as they came, unprocessed (`skp`).
    public var skipProcessing: Set<Format> = []
    public var raw = false
    public var cacheBuster = ""
    /// A Unix time after which the URL is refused; nil for none.
    public var expires: Int?
    /// The answer's file name, without extension (`fn`).
    public var filename: String?
    public var returnAttachment = false
    public var sourceLimits = SourceLimits()
    /// The presets applied, in order, for logs.
    public var usedPresets: [String] = []
    // Imago's own
    public var grayscale = false
    /// The luma weights of the gray: Rec. 709's (the default) or, with
    /// `imago_gray:1:601`, Rec. 601's, as thumbor's `grayscale()` weighs.
    var grayscaleWeights = ImageProcessors.Grayscale.Weights.rec709
    /// Rounded corners' radius in CSS pixels (scaled by the dpr); 0 for none.
    public var cornerRadius = 0
    /// The model's colour operations that imgproxy's open-source edition
    /// lacks (`sa`, `imago_brightness`, `imago_equalize`, …), the last of
    /// each kind given; done after the other effects, in ``Effect/Kind``'s order.
    var adjustments: [Effect.Kind: Effect] = [:]

    public init() {}

    /// The output box in pixels, dpr and zoom applied; 0 leaves a side free.
    public var targetSize: ImageSize {
        ImageSize(width: LayoutPlan.scaled(width, by: dpr * zoomWidth), height: LayoutPlan.scaled(height, by: dpr * zoomHeight))
    }

}

/// An option segment that is not allowed, and why: answered with 400 (or
/// ``status`` where imgproxy answers otherwise).
public struct OptionError: Error, Equatable, CustomStringConvertible {
    /// Why the option is refused, which decides the status.
    public enum Kind: Sendable, Equatable {
        /// Unknown, or malformed arguments: 400.
        case invalid
        /// A URL past its `expires` time: 404, as imgproxy answers.
        case expired
        /// A source limit the operator does not let URLs set: 403.
        case forbidden
    }

    public var option: String
    public var reason: String
    public var kind = Kind.invalid

    public init(option: String, reason: String, kind: Kind = .invalid) {
        self.option = option
        self.reason = reason
        self.kind = kind
    }

    public var description: String { "bad option \"\(option)\": \(reason)" }
}
