import Foundation

extension ImageProcessors {
    /// The image placed with its top-left corner at (`x`, `y`) on a canvas
    /// of `size` filled with `background`: padding, letterboxing, or a cut
    /// (either offset may be negative, and the canvas smaller than the
    /// image: what falls outside is dropped). Pixels are copied, not
    /// composited: the image's transparent pixels stay transparent.
    ///
    /// ```swift
    /// // A 100x100 image centred on a white 120x120 square.
    /// let padded = ImageProcessors.Embed(size: ImageSize(width: 120, height: 120), x: 10, y: 10, background: .white).process(image)
    /// ```
    ///
    /// The result has alpha when the image has alpha or `background.alpha`
    /// is below 255; it is gray when the image is gray and the background
    /// is a gray (red, green and blue equal), colour otherwise. It has no
    /// animation (one frame is placed). `nil` when the canvas is empty
    /// (a side of 0 or less) or has more than ``maximumPixelCount`` pixels.
    /// The image itself when the canvas is the image (its size, at (0, 0),
    /// and the format unchanged).
    public struct Embed: ImageProcessing, Hashable {
        /// The canvas size.
        public var size: ImageSize
        /// The image's left edge on the canvas, in pixels (negative: cut on the left).
        public var x: Int
        /// The image's top edge on the canvas, in pixels (negative: cut at the top).
        public var y: Int
        /// The colour of the canvas where the image does not cover it.
        public var background: Color

        /// The largest canvas made, in pixels: the decoders' default
        /// ``ImageDecodingOptions/maximumPixelCount``, so that a size taken
        /// from a URL cannot ask for gigabytes.
        public static let maximumPixelCount = 100_000_000

        /// Creates a placement of the image at (`x`, `y`) on a canvas of `size`.
        public init(size: ImageSize, x: Int, y: Int, background: Color = .transparent) {
            self.size = size
            self.x = x
            self.y = y
            self.background = background
        }

        /// `embed(WxH,x,y,#rrggbbaa)`.
        public var identifier: String { "embed(\(size),\(x),\(y),\(background))" }

        public func process(_ image: Image) -> Image? {
            let (width, height) = (size.width, size.height)
            let area = width.multipliedReportingOverflow(by: height)
            guard width > 0, height > 0, !area.overflow, area.partialValue <= Self.maximumPixelCount else { return nil }
            let addingColor = !background.isGray
            let addingAlpha = background.alpha < 255
            let format = image.pixelFormat.adding(color: addingColor, alpha: addingAlpha)
            if size == image.size, x == 0, y == 0, format == image.pixelFormat { return image }

            let channels = format.bytesPerPixel
            let rowBytes = width * channels
            let fill = Self.pixel(background, in: format)
            // The covered columns and rows of the canvas: none when the
            // image lies wholly outside (checked first, so that x + width
            // cannot overflow for any x).
            let covers = x < width && x > -image.width && y < height && y > -image.height
            let columns = covers ? max(0, x)..<min(width, x + image.width) : 0..<0
            let rows = covers ? max(0, y)..<min(height, y + image.height) : 0..<0
            let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { output, initialized in
                guard let canvas = output.baseAddress else { return }
                for index in 0..<width { (canvas + index * channels).initialize(from: fill, count: channels) }
                for row in 1..<height { (canvas + row * rowBytes).initialize(from: canvas, count: rowBytes) }
                if !columns.isEmpty {
                    image.pixels.withUnsafeBufferPointer { source in
                        guard let source = source.baseAddress else { return }
                        let sourceChannels = image.pixelFormat.bytesPerPixel
                        for row in rows {
                            let from = source + ((row - y) * image.bytesPerRow + (columns.lowerBound - x) * sourceChannels)
                            let to = canvas + (row * rowBytes + columns.lowerBound * channels)
                            image.pixelFormat.widen(from, into: to, count: columns.count, addingColor: addingColor, addingAlpha: addingAlpha)
                        }
                    }
                }
                initialized = rowBytes * height
            }
            return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
        }

        /// `color`'s bytes in `format`: red alone for gray, which is only
        /// chosen when the colour is a gray.
        static func pixel(_ color: Color, in format: Image.PixelFormat) -> [UInt8] {
            switch format {
            case .gray8: [color.red]
            case .grayAlpha8: [color.red, color.alpha]
            case .rgb8: [color.red, color.green, color.blue]
            case .rgba8: [color.red, color.green, color.blue, color.alpha]
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Embed {
    /// Places the image at (`x`, `y`) on a canvas of `size` filled with `background`.
    public static func embed(in size: ImageSize, x: Int, y: Int, background: Color = .transparent) -> Self {
        ImageProcessors.Embed(size: size, x: x, y: y, background: background)
    }
}
