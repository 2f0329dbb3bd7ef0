import Foundation

extension ImageProcessors {
    /// Scales to fill or fit a size, keeping the aspect ratio and never
    /// enlarging; with `crop`, a filled image is then cut to the size, centred.
    public struct Resize: ImageProcessing, Hashable {
        public var size: ImageSize
        public var contentMode: ContentMode
        public var crop: Bool

        public init(size: ImageSize, contentMode: ContentMode = .fill, crop: Bool = false) {
            self.size = size
            self.contentMode = contentMode
            self.crop = crop
        }

        public var identifier: String { "resize(\(size),\(contentMode.rawValue)\(crop ? ",crop" : ""))" }

        public func process(_ image: Image) -> Image? {
            guard size.width > 0, size.height > 0 else { return nil }
            let scaled = ImageDecodingOptions(targetSize: size, contentMode: contentMode).scaled(image)
            guard crop, contentMode == .fill else { return scaled }
            let width = min(size.width, scaled.width)
            let height = min(size.height, scaled.height)
            return Crop(x: (scaled.width - width) / 2, y: (scaled.height - height) / 2, width: width, height: height).process(scaled)
        }
    }

    /// Cuts out a rectangle, in pixels from the top-left corner; the parts
    /// outside the image are dropped. `nil` when nothing is left.
    public struct Crop: ImageProcessing, Hashable {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int

        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        public var identifier: String { "crop(\(x),\(y),\(width)x\(height))" }

        public func process(_ image: Image) -> Image? {
            let left = max(0, x)
            let top = max(0, y)
            let right = min(image.width, x.addingReportingOverflow(width).partialValue)
            let bottom = min(image.height, y.addingReportingOverflow(height).partialValue)
            guard left < right, top < bottom else { return nil }
            if left == 0, top == 0, right == image.width, bottom == image.height { return image }
            let channels = image.pixelFormat.bytesPerPixel
            let rowBytes = (right - left) * channels
            var pixels: [UInt8] = []
            pixels.reserveCapacity(rowBytes * (bottom - top))
            for row in top..<bottom {
                let start = row * image.bytesPerRow + left * channels
                pixels.append(contentsOf: image.pixels[start..<(start + rowBytes)])
            }
            return Image(width: right - left, height: bottom - top, pixelFormat: image.pixelFormat, pixels: pixels)
        }
    }

    /// Makes the corners transparent outside quarter circles of `radius`
    /// pixels, with anti-aliased edges. `circle` clips to the largest
    /// centred circle instead (crop to a square first for a round avatar).
    /// The result has alpha.
    public struct RoundedCorners: ImageProcessing, Hashable {
        /// The corner radius in pixels; ignored for a circle.
        public var radius: Double
        /// Whether the clip is the image's inscribed circle (or ellipse).
        public var isCircle: Bool

        public init(radius: Double) {
            self.radius = radius
            self.isCircle = false
        }

        init(circle: Void) {
            self.radius = 0
            self.isCircle = true
        }

        public var identifier: String { isCircle ? "circle" : "roundedCorners(\(radius))" }

        public func process(_ image: Image) -> Image? {
            let withAlpha = image.addingAlpha()
            let width = Double(image.width)
            let height = Double(image.height)
            let channels = withAlpha.pixelFormat.bytesPerPixel
            var pixels = withAlpha.pixels
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let coverage =
                        isCircle
                        ? Self.ellipseCoverage(x: Double(x) + 0.5, y: Double(y) + 0.5, width: width, height: height)
                        : Self.cornerCoverage(x: Double(x) + 0.5, y: Double(y) + 0.5, width: width, height: height, radius: radius)
                    guard coverage < 1 else { continue }
                    let alpha = y * withAlpha.bytesPerRow + x * channels + channels - 1
                    pixels[alpha] = UInt8((Double(pixels[alpha]) * coverage).rounded())
                }
            }
            return Image(
                width: image.width, height: image.height, pixelFormat: withAlpha.pixelFormat, bytesPerRow: withAlpha.bytesPerRow, pixels: pixels
            )
        }

        /// How much of the pixel centred at (x, y) lies inside the rounded
        /// rectangle: 1 inside, 0 outside, a one-pixel ramp across the edge.
        static func cornerCoverage(x: Double, y: Double, width: Double, height: Double, radius: Double) -> Double {
            let r = max(0, min(radius, min(width, height) / 2))
            let dx = max(0, max(r - x, x - (width - r)))
            let dy = max(0, max(r - y, y - (height - r)))
            guard dx > 0, dy > 0 else { return 1 }
            return max(0, min(1, r - (dx * dx + dy * dy).squareRoot() + 0.5))
        }

        static func ellipseCoverage(x: Double, y: Double, width: Double, height: Double) -> Double {
            let rx = width / 2
            let ry = height / 2
            let nx = (x - rx) / rx
            let ny = (y - ry) / ry
            let distance = (nx * nx + ny * ny).squareRoot()
            // The signed distance to the edge, in pixels along the smaller radius.
            return max(0, min(1, (1 - distance) * min(rx, ry) + 0.5))
        }
    }

    /// A Gaussian blur with standard deviation `radius / 2` pixels (so the
    /// visible spread is about `radius`), separable, colour weighted by alpha.
    public struct GaussianBlur: ImageProcessing, Hashable {
        public var radius: Double

        public init(radius: Double) {
            self.radius = radius
        }

        public var identifier: String { "gaussianBlur(\(radius))" }

        public func process(_ image: Image) -> Image? {
            guard radius > 0, radius.isFinite else { return image }
            let kernel = Self.kernel(sigma: radius / 2)
            let blurred = ImageResizer.resample(
                image,
                columns: Footprint.convolution(count: image.width, kernel: kernel),
                rows: Footprint.convolution(count: image.height, kernel: kernel)
            )
            return blurred ?? image
        }

        /// Normalised weights from -n to n, n = ceil(3 sigma), at most 1,024.
        static func kernel(sigma: Double) -> [Float] {
            let reach = max(1, Int(min(1_024, (3 * sigma).rounded(.up))))
            let weights = (-reach...reach).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
            let total = weights.reduce(0, +)
            return weights.map { Float($0 / total) }
        }
    }

    /// Converts to gray with the Rec. 709 luma weights (or Rec. 601's, as
    /// Pillow and thumbor weigh), keeping alpha.
    public struct Grayscale: ImageProcessing, Hashable {
        /// Which standard's luma weights.
        public enum Weights: Sendable, Hashable {
            /// 0.2126, 0.7152, 0.0722: the default.
            case rec709
            /// 0.299, 0.587, 0.114.
            case rec601
        }

        public var weights: Weights

        public init(weights: Weights = .rec709) {
            self.weights = weights
        }

        public var identifier: String { weights == .rec709 ? "grayscale" : "grayscale(601)" }

        public func process(_ image: Image) -> Image? {
            let channels = image.pixelFormat.bytesPerPixel
            guard channels >= 3 else { return image }
            let hasAlpha = image.pixelFormat.hasAlpha
            let outputChannels = hasAlpha ? 2 : 1
            let factors: (Float, Float, Float) = weights == .rec709 ? (0.2126, 0.7152, 0.0722) : (0.299, 0.587, 0.114)
            let count = image.width * image.height
            let pixels = [UInt8](unsafeUninitializedCapacity: count * outputChannels) { output, initialized in
                for y in 0..<image.height {
                    for x in 0..<image.width {
                        let source = y * image.bytesPerRow + x * channels
                        let target = (y * image.width + x) * outputChannels
                        let luma =
                            factors.0 * Float(image.pixels[source]) + factors.1 * Float(image.pixels[source + 1])
                            + factors.2 * Float(image.pixels[source + 2])
                        output[target] = UInt8(min(255, luma.rounded()))
                        if hasAlpha { output[target + 1] = image.pixels[source + 3] }
                    }
                }
                initialized = count * outputChannels
            }
            return Image(width: image.width, height: image.height, pixelFormat: hasAlpha ? .grayAlpha8 : .gray8, pixels: pixels)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Resize {
    /// Scales to fill (or fit) `size`, never enlarging; `crop` cuts a filled image to `size`.
    public static func resize(to size: ImageSize, contentMode: ContentMode = .fill, crop: Bool = false) -> Self {
        ImageProcessors.Resize(size: size, contentMode: contentMode, crop: crop)
    }
}

extension ImageProcessing where Self == ImageProcessors.Crop {
    /// Cuts out a rectangle.
    public static func crop(x: Int, y: Int, width: Int, height: Int) -> Self {
        ImageProcessors.Crop(x: x, y: y, width: width, height: height)
    }
}

extension ImageProcessing where Self == ImageProcessors.RoundedCorners {
    /// Rounds the corners with `radius` pixels.
    public static func roundedCorners(radius: Double) -> Self { ImageProcessors.RoundedCorners(radius: radius) }

    /// Clips to the inscribed circle (an ellipse for a non-square image).
    public static func circle() -> Self { ImageProcessors.RoundedCorners(circle: ()) }
}

extension ImageProcessing where Self == ImageProcessors.GaussianBlur {
    /// Blurs with a Gaussian of about `radius` pixels.
    public static func gaussianBlur(radius: Double = 8) -> Self { ImageProcessors.GaussianBlur(radius: radius) }
}

extension ImageProcessing where Self == ImageProcessors.Grayscale {
    /// Converts to gray.
    public static var grayscale: Self { ImageProcessors.Grayscale() }
}
