import Foundation

/// How a stored image must be turned to be shown upright: the EXIF
/// orientation tag's eight values (camera JPEGs are often stored sideways
/// with the tag saying so).
public enum ImageOrientation: Int, Sendable, Hashable {
    case up = 1
    case upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether showing the image upright swaps its width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The orientation that turns an upright image back as it was stored.
    public var inverse: ImageOrientation {
        switch self {
        case .right: .left
        case .left: .right
        default: self
        }
    }

    /// `image` turned upright.
    public func apply(to image: Image) -> Image {
        guard self != .up else { return image }
        let (width, height) = (image.width, image.height)
        let (outputWidth, outputHeight) = swapsDimensions ? (height, width) : (width, height)
        let channels = image.pixelFormat.bytesPerPixel
        // The source point of an output pixel is affine in (x, y), so each
        // output row walks the source from one offset by a constant step
        // (a column or a row, forwards or backwards).
        func offset(_ point: (Int, Int)) -> Int { point.1 * image.bytesPerRow + point.0 * channels }
        let origin = offset(sourcePoint(x: 0, y: 0, width: width, height: height))
        let columnStep = offset(sourcePoint(x: 1, y: 0, width: width, height: height)) - origin
        let rowStep = offset(sourcePoint(x: 0, y: 1, width: width, height: height)) - origin
        let pixels = [UInt8](unsafeUninitializedCapacity: outputWidth * outputHeight * channels) { output, initialized in
            image.pixels.withUnsafeBufferPointer { source in
                guard let source = source.baseAddress, let output = output.baseAddress else { return }
                for y in 0..<outputHeight {
                    Self.copyPixels(source + (origin + y * rowStep), columnStep, output + y * outputWidth * channels, outputWidth, channels)
                }
                initialized = outputWidth * outputHeight * channels
            }
        }
        var turned = Image(width: outputWidth, height: outputHeight, pixelFormat: image.pixelFormat, pixels: pixels) ?? image
        turned.animation = image.animation
        return turned
    }

    /// Copies `count` pixels of `channels` bytes, `step` bytes apart in
    /// `source`, to consecutive pixels of `target`; a loop per pixel size,
    /// so that the inner copy has a constant length.
    private static func copyPixels(
        _ source: UnsafePointer<UInt8>, _ step: Int, _ target: UnsafeMutablePointer<UInt8>, _ count: Int, _ channels: Int
    ) {
        @inline(__always)
        func copy(_ channels: Int) {
            for index in 0..<count {
                let from = source + index * step
                let to = target + index * channels
                for channel in 0..<channels { to[channel] = from[channel] }
            }
        }
        switch channels {
        case 1: copy(1)
        case 2: copy(2)
        case 3: copy(3)
        default: copy(4)
        }
    }

    /// The stored pixel shown at (x, y) once upright.
    private func sourcePoint(x: Int, y: Int, width: Int, height: Int) -> (Int, Int) {
        switch self {
        case .up: (x, y)
        case .upMirrored: (width - 1 - x, y)
        case .down: (width - 1 - x, height - 1 - y)
        case .downMirrored: (x, height - 1 - y)
        case .leftMirrored: (y, x)
        case .right: (y, height - 1 - x)
        case .rightMirrored: (width - 1 - y, height - 1 - x)
        case .left: (width - 1 - y, x)
        }
    }

    /// The orientation a JPEG's EXIF segment (APP1) declares, `.up` if it
    /// has none or it cannot be read. Every offset is bounds-checked: the
    /// segment comes from the network.
    public init(jpeg data: Data) {
        self = data.withUnsafeBytes { Self.readJPEG(UnsafeRawBufferPointer($0)) } ?? .up
    }

    private static func readJPEG(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        var orientation: ImageOrientation?
        JPEGSegments.forEach(in: bytes) { marker, payload in
            guard marker == 0xE1, let tiff = payload.dropping(prefix: "Exif\0\0") else { return true }
            orientation = EXIF(tiff)?.orientation.flatMap(ImageOrientation.init(rawValue:))
            return false
        }
        return orientation
    }

    /// The orientation a WebP's EXIF chunk declares, `.up` if it has none
    /// or it cannot be read. Every offset is bounds-checked.
    public init(webp data: Data) {
        self = data.withUnsafeBytes { Self.readWebP(UnsafeRawBufferPointer($0)) } ?? .up
    }

    /// The orientation a TIFF's first directory declares (its tag 274,
    /// which ``TIFFDecoder`` applies), `.up` if it has none or it cannot be read.
    public init(tiff data: Data) {
        self = data.withUnsafeBytes { EXIF($0)?.orientation.flatMap(ImageOrientation.init(rawValue:)) } ?? .up
    }

    private static func readWebP(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        var orientation: ImageOrientation?
        RIFFChunks.forEach(in: bytes) { code, payload in
            guard code.isText("EXIF") else { return true }
            // Some writers keep the JPEG segment's "Exif\0\0" prefix.
            orientation = EXIF(payload.dropping(prefix: "Exif\0\0") ?? payload)?.orientation.flatMap(ImageOrientation.init(rawValue:))
            return false
        }
        return orientation
    }
}
