import CTurboJPEG
import CWebP
import Foundation

extension ImageDecodingOptions {
    /// The bytes of pixels a decode of `data` will hold at most, from its
    /// header alone: JPEG at the DCT scale it will be decoded at, SVG at
    /// the size it will be rendered at, PNG, GIF, WebP, BMP and TIFF (its
    /// first page) at their full size, ICO at its largest image's, 4 bytes
    /// a pixel; `nil` for a format whose header is not read here (AVIF,
    /// HEIC, JPEG XL) or a header that does not parse. For budgeting
    /// decodes before starting them.
    public func decodedBytesEstimate(of data: Data) -> Int? {
        guard let size = Self.declaredSize(of: data) else { return nil }
        guard size.width > 0, size.height > 0 else { return 0 }
        var decoded = size
        switch ImageFormat(sniffing: data) {
        case .jpeg: decoded = JPEGDecoder.scaledSize(size, covering: outputSize(for: size))
        case .svg: decoded = SVGDecoder.renderedSize(of: size, options: self)
        default: break
        }
        let (pixels, overflow) = decoded.width.multipliedReportingOverflow(by: decoded.height)
        return overflow || pixels > Int.max / 4 ? Int.max : pixels * 4
    }

    /// The width and height a JPEG, PNG, GIF, WebP or BMP header declares,
    /// a TIFF's first page, an ICO's largest image, or an SVG's root
    /// element (its intrinsic size, ``SVGIntrinsicSize``).
    static func declaredSize(of data: Data) -> ImageSize? {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> ImageSize? in
            func bigEndian32(_ offset: Int) -> Int { (0..<4).reduce(0) { $0 << 8 | Int(bytes[offset + $1]) } }
            func littleEndian16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
            switch ImageFormat(sniffing: data) {
            case .png:
                // Signature (8), IHDR length and type (8), then width and height.
                guard bytes.count >= 24 else { return nil }
                return ImageSize(width: bigEndian32(16), height: bigEndian32(20))
            case .gif:
                guard bytes.count >= 10 else { return nil }
                return ImageSize(width: littleEndian16(6), height: littleEndian16(8))
            case .webp:
                var width: Int32 = 0
                var height: Int32 = 0
                let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                guard WebPGetInfo(base, bytes.count, &width, &height) != 0 else { return nil }
                return ImageSize(width: Int(width), height: Int(height))
            case .jpeg:
                guard let handle = tjInitDecompress(), let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
                defer { tjDestroy(handle) }
                var width: Int32 = 0
                var height: Int32 = 0
                var subsampling: Int32 = 0
                var colorspace: Int32 = 0
                _ = tjDecompressHeader3(handle, base, UInt(bytes.count), &width, &height, &subsampling, &colorspace)
                return width > 0 && height > 0 ? ImageSize(width: Int(width), height: Int(height)) : nil
            case .bmp:
                return (try? BMPDecoder.bitmap(in: bytes)).map { ImageSize(width: $0.0.width, height: $0.0.height) }
            case .tiff:
                // The first directory's ImageWidth and ImageLength (SHORT or LONG).
                guard let file = EXIF(bytes) else { return nil }
                let entries = file.entries
                guard let width = entries.first(where: { $0.tag == 256 }).flatMap(file.integer),
                    let height = entries.first(where: { $0.tag == 257 }).flatMap(file.integer)
                else { return nil }
                return ImageSize(width: width, height: height)
            case .ico:
                return (try? ICODirectory(bytes))?.largestSize
            case .svg:
                return SVGIntrinsicSize(reading: data)?.pixelSize
            default:
                return nil
            }
        }
    }
}
