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
        var offset = 2  // after SOI
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            // Start of scan or end of image: no metadata after this point.
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return nil }
            let segment = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 2 + length)])
            if marker == 0xE1, segment.starts(with: Array("Exif\0\0".utf8)) {
                return readTIFF(UnsafeRawBufferPointer(rebasing: segment[6...]))
            }
            offset += 2 + length
        }
        return nil
    }

    /// The orientation a WebP's EXIF chunk declares, `.up` if it has none
    /// or it cannot be read. Every offset is bounds-checked.
    public init(webp data: Data) {
        self = data.withUnsafeBytes { Self.readWebP(UnsafeRawBufferPointer($0)) } ?? .up
    }

    private static func readWebP(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        // RIFF header (12 bytes), then chunks: a four-character code, a
        // little-endian size, the payload padded to an even length.
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = (0..<4).reduce(0) { $0 | Int(bytes[offset + 4 + $1]) << (8 * $1) }
            guard size <= bytes.count - offset - 8 else { return nil }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + 8)..<(offset + 8 + size)])
            if bytes[offset..<(offset + 4)].elementsEqual("EXIF".utf8) {
                // Some writers keep the JPEG segment's "Exif\0\0" prefix.
                let prefix = Array("Exif\0\0".utf8)
                return readTIFF(payload.starts(with: prefix) ? UnsafeRawBufferPointer(rebasing: payload[prefix.count...]) : payload)
            }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    /// Finds tag 0x0112 in the first IFD of a TIFF structure.
    private static func readTIFF(_ tiff: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return nil
        }
        func read(_ offset: Int, _ size: Int) -> Int? {
            guard offset >= 0, offset + size <= tiff.count else { return nil }
            return (0..<size).reduce(0) { value, index in
                value | Int(tiff[offset + index]) << (8 * (bigEndian ? size - 1 - index : index))
            }
        }
        guard read(2, 2) == 42, let directory = read(4, 4), let count = read(directory, 2) else { return nil }
        for entry in 0..<count {
            let base = directory + 2 + entry * 12
            guard let tag = read(base, 2) else { return nil }
            // Type 3 is SHORT: the value sits in the first two bytes of the value field.
            if tag == 0x0112, read(base + 2, 2) == 3, let value = read(base + 8, 2) {
                return ImageOrientation(rawValue: value)
            }
        }
        return nil
    }
}
