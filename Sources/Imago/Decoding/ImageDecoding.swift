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

    /// The largest number of pixels a header may declare before the decode
    /// is refused without allocating anything.
    public var maximumPixelCount: Int

    /// Creates decoding options.
    public init(targetSize: ImageSize? = nil, maximumPixelCount: Int = 100_000_000) {
        self.targetSize = targetSize
        self.maximumPixelCount = maximumPixelCount
    }
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
}

/// Why a decoder refused or failed.
public struct ImageDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The bytes are not in a format any decoder handles; `seen` says what they look like.
        case unsupportedFormat(seen: String)
        /// The header declares more pixels than allowed.
        case tooManyPixels(width: Int, height: Int, limit: Int)
        /// The data is damaged or truncated; `detail` is the codec's message.
        case corrupt
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
        case .corrupt:
            return detail.isEmpty ? "corrupt \(format) data" : "corrupt \(format) data: \(detail)"
        }
    }
}
