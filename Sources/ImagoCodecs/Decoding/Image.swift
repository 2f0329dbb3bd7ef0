import Foundation

/// A decoded bitmap: platform-neutral, immutable, cheap to copy (the pixels are shared).
///
/// ```swift
/// let response = try await ImagePipeline.shared.image(for: url)
/// print(response.image.width, response.image.height, response.image.pixelFormat)
/// ```
///
/// Rows are stored top to bottom, `bytesPerRow` apart, with no padding beyond
/// `width * pixelFormat.bytesPerPixel` unless a decoder says otherwise.
public struct Image: Sendable, Equatable {
    /// The layout of one pixel.
    public enum PixelFormat: Sendable, Equatable, CustomStringConvertible {
        /// One 8-bit luminance channel.
        case gray8
        /// 8-bit luminance then 8-bit alpha (straight, not premultiplied).
        case grayAlpha8
        /// 8-bit red, green, blue.
        case rgb8
        /// 8-bit red, green, blue, alpha (straight, not premultiplied).
        case rgba8

        /// The number of bytes one pixel takes.
        public var bytesPerPixel: Int {
            switch self {
            case .gray8: 1
            case .grayAlpha8: 2
            case .rgb8: 3
            case .rgba8: 4
            }
        }

        /// Whether the format carries an alpha channel.
        public var hasAlpha: Bool { self == .grayAlpha8 || self == .rgba8 }

        public var description: String {
            switch self {
            case .gray8: "gray8"
            case .grayAlpha8: "grayAlpha8"
            case .rgb8: "rgb8"
            case .rgba8: "rgba8"
            }
        }
    }

    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The layout of each pixel.
    public let pixelFormat: PixelFormat
    /// The distance in bytes from one row to the next.
    public let bytesPerRow: Int
    /// The pixel bytes, `bytesPerRow * height` of them.
    public internal(set) var pixels: [UInt8]
    /// The rest of the frames, for an animated image (GIF, animated WebP, AVIF
    /// sequence) of more than one frame; this image is its first frame.
    public internal(set) var animation: ImageAnimation?

    /// Creates an image from pixel bytes, or returns `nil` if the sizes do not add up.
    public init?(width: Int, height: Int, pixelFormat: PixelFormat, bytesPerRow: Int? = nil, pixels: [UInt8]) {
        let rowBytes = width.multipliedReportingOverflow(by: pixelFormat.bytesPerPixel)
        guard width > 0, height > 0, !rowBytes.overflow else { return nil }
        let stride = bytesPerRow ?? rowBytes.partialValue
        let total = stride.multipliedReportingOverflow(by: height)
        guard stride >= rowBytes.partialValue, !total.overflow, pixels.count == total.partialValue else { return nil }
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bytesPerRow = stride
        self.pixels = pixels
    }

    /// The width and height.
    public var size: ImageSize { ImageSize(width: width, height: height) }

    /// The same pixels with an opaque alpha channel added (gray to gray
    /// and alpha, RGB to RGBA); the image itself if it has alpha already.
    public func addingAlpha() -> Image {
        widened(addingColor: false, addingAlpha: true)
    }

    /// The memory the image occupies, in bytes: what a memory cache charges
    /// for it. An animation adds its encoded data, which its frames are
    /// decoded from one at a time.
    public var cost: Int { pixels.count + (animation?.data.count ?? 0) }
}

extension Image: CustomStringConvertible, CustomDebugStringConvertible {
    /// Size and layout, never the pixels (which would print megabytes).
    public var description: String {
        let frames = animation.map { ", \($0.frameCount) frames" } ?? ""
        return "Image(\(width)x\(height) \(pixelFormat), \(pixels.count) bytes\(frames))"
    }
    public var debugDescription: String { description }
}
