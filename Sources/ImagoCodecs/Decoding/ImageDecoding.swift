import Foundation

/// Turns encoded bytes into an ``Image``.
///
/// Decoders are called off the caller's thread and off Swift's cooperative
/// pool, on the pipeline's decoding threads; they may block.
public protocol ImageDecoding: Sendable {
    /// Whether this decoder handles data that sniffed as `format`.
    func canDecode(_ format: ImageFormat) -> Bool

    /// Decodes `data`, scaling down while decoding where the format allows so
    /// that the result still covers `options.targetSize`.
    func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image
}

/// What a caller asks of a decode.
public struct ImageDecodingOptions: Sendable, Hashable {
    /// The size the image will be shown at, in pixels; `nil` decodes at full size.
    ///
    /// Decoders may return a larger image (the nearest size they can decode
    /// cheaply) but never a smaller one than needed to cover this size.
    public var targetSize: ImageSize?

    /// How the image is scaled to `targetSize`. Default: ``ContentMode/fill``.
    public var contentMode: ContentMode

    /// The largest number of pixels a header may declare before the decode
    /// is refused without allocating anything.
    public var maximumPixelCount: Int

    /// The largest number of frames an animated image may have before the
    /// decode is refused.
    public var maximumFrameCount: Int

    /// Whether a thumbnail the file embeds (HEIC, AVIF) is decoded instead
    /// of the main image, when there is one: far cheaper, and as large as
    /// the camera that wrote it chose. Default: `false`.
    public var prefersEmbeddedThumbnail: Bool

    /// Whether pixels are converted to sRGB from the colour space the file
    /// declares (an ICC profile; AVIF and HEIC colour code points; PNG
    /// gAMA and cHRM), as browsers show them. Default: `true`. With
    /// `false` the pixels come as stored, for an encoder to write with the
    /// source's profile (``ImageMetadata/iccProfile``).
    public var convertsToSRGB: Bool

    /// Which page of a multi-page file, or frame of an animation, is
    /// decoded, counted from 0. ``TIFFDecoder`` reads the page itself;
    /// ``selectingPage(of:format:)`` picks the frame of an animation the
    /// other decoders return. Pages past ``maximumFrameCount`` are refused,
    /// and a page the file does not have is
    /// ``ImageDecodingError/Code/noSuchPage(page:)``. Default: 0.
    public var page: Int

    /// Creates decoding options.
    public init(
        targetSize: ImageSize? = nil,
        contentMode: ContentMode = .fill,
        maximumPixelCount: Int = 100_000_000,
        maximumFrameCount: Int = 1_000,
        prefersEmbeddedThumbnail: Bool = false,
        convertsToSRGB: Bool = true,
        page: Int = 0
    ) {
        self.targetSize = targetSize
        self.contentMode = contentMode
        self.maximumPixelCount = maximumPixelCount
        self.maximumFrameCount = maximumFrameCount
        self.prefersEmbeddedThumbnail = prefersEmbeddedThumbnail
        self.convertsToSRGB = convertsToSRGB
        self.page = page
    }

    /// The size an image of `size` is shown at: scaled down, keeping its
    /// aspect ratio, until it fills (or fits in) `targetSize`; never enlarged.
    public func outputSize(for size: ImageSize) -> ImageSize {
        guard let targetSize, targetSize.width > 0, targetSize.height > 0 else { return size }
        let widthScale = Double(targetSize.width) / Double(size.width)
        let heightScale = Double(targetSize.height) / Double(size.height)
        let scale = contentMode == .fill ? max(widthScale, heightScale) : min(widthScale, heightScale)
        guard scale < 1 else { return size }
        return ImageSize(
            width: max(1, Int((Double(size.width) * scale).rounded())),
            height: max(1, Int((Double(size.height) * scale).rounded()))
        )
    }

    /// `image` resampled down to ``outputSize(for:)``, its animation kept:
    /// the last step of a decode, for decoders that cannot scale exactly.
    public func scaled(_ image: Image) -> Image {
        let size = outputSize(for: image.size)
        guard size != image.size, var resized = ImageResizer.resize(image, to: size) else { return image }
        resized.animation = image.animation
        return resized
    }

    /// Refuses a header declaring no pixels (damaged or truncated data) or
    /// more than ``maximumPixelCount``.
    func checkPixelCount(width: Int, height: Int, format: ImageFormat) throws(ImageDecodingError) {
        guard width > 0, height > 0 else {
            throw ImageDecodingError(code: .corrupt, format: format, detail: "the header declares an empty image (\(width)x\(height))")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maximumPixelCount else {
            throw ImageDecodingError(code: .tooManyPixels(width: width, height: height, limit: maximumPixelCount), format: format)
        }
    }
}

/// How an image is scaled to a target size, its aspect ratio kept.
public enum ContentMode: String, Sendable, Hashable {
    /// Covers the whole target size; the image may overflow it on one side.
    case fill
    /// Fits inside the target size; the image may leave a margin on one side.
    case fit
}

/// A width and height in pixels.
public struct ImageSize: Sendable, Hashable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }

    /// Width and height swapped.
    public var transposed: ImageSize { ImageSize(width: height, height: width) }
}

/// Why a decoder refused or failed.
public struct ImageDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The bytes are not in a format any decoder handles; `seen` says what they look like.
        case unsupportedFormat(seen: String)
        /// The header declares more pixels than allowed.
        case tooManyPixels(width: Int, height: Int, limit: Int)
        /// The animation has more frames than allowed.
        case tooManyFrames(count: Int, limit: Int)
        /// The file has no page `page` (``ImageDecodingOptions/page``);
        /// `detail` says how many it has when that is known.
        case noSuchPage(page: Int)
        /// The data is damaged or truncated; `detail` is the codec's message.
        case corrupt
        /// The data asks for something Imago will not do: an SVG's external
        /// or recursive entities, more work than ``SVGDecoder/Limits``
        /// allow, a side longer than the renderer draws; `detail` says which.
        case refused
    }

    /// What went wrong.
    public var code: Code
    /// The format the data sniffed as.
    public var format: ImageFormat
    /// The codec's own message, if any.
    public var detail: String

    /// Creates a decoding error.
    public init(code: Code, format: ImageFormat, detail: String = "") {
        self.code = code
        self.format = format
        self.detail = detail
    }

    public var description: String {
        switch code {
        case .unsupportedFormat(let seen):
            return "unsupported data (\(seen))"
        case .tooManyPixels(let width, let height, let limit):
            return "\(format) declares \(width)x\(height) pixels, over the limit of \(limit)"
        case .tooManyFrames(let count, let limit):
            return "\(format) has \(count) frames or more, over the limit of \(limit)"
        case .noSuchPage(let page):
            return detail.isEmpty ? "\(format) has no page \(page)" : "\(format) has no page \(page): \(detail)"
        case .corrupt:
            return detail.isEmpty ? "corrupt \(format) data" : "corrupt \(format) data: \(detail)"
        case .refused:
            return detail.isEmpty ? "refused \(format) data" : "refused \(format) data: \(detail)"
        }
    }
}
