import Foundation

/// Decodes BMP without a library: BITMAPCOREHEADER, BITMAPINFOHEADER (with
/// Adobe's extensions), BITMAPV4HEADER and BITMAPV5HEADER; 1-, 2-, 4- and
/// 8-bit palettes, 16- and 32-bit pixels with their bit masks (the alpha
/// mask of a V4 or V5 header included), 24-bit pixels, RLE8 and RLE4;
/// bottom-up and top-down rows.
///
/// Output: ``Image/PixelFormat/rgb8``, or ``Image/PixelFormat/rgba8`` when
/// the bitmap has transparent pixels: an alpha channel (a 32-bit bitmap's
/// fourth byte, or its alpha mask) that is not 255 everywhere, or pixels a
/// run-length encoding skips. An alpha channel that is zero everywhere is
/// opaque, as browsers show it. Every offset and size is checked against
/// the data; pixel data shorter than the header declares is an error
/// (found before anything is allocated). Embedded JPEG or PNG bitmaps,
/// OS/2 2.x headers and CMYK bitmaps are refused. An embedded ICC profile
/// is read by ``ImageMetadata/init(reading:)``, never applied.
public struct BMPDecoder: ImageDecoding {
    /// Creates a BMP decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .bmp }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let result = data.withUnsafeBytes { bytes -> Result<Image, ImageDecodingError> in
            Result { () throws(ImageDecodingError) in
                let (bitmap, pixelOffset) = try Self.bitmap(in: bytes)
                return try bitmap.decode(bytes, pixelsAt: pixelOffset, options: options).image(format: .bmp)
            }
        }
        return options.scaled(try result.get())
    }

    /// The bitmap after the 14-byte file header ("BM", the file size, two
    /// reserved fields, the offset of the pixels), and where its pixels are.
    static func bitmap(in bytes: UnsafeRawBufferPointer) throws(ImageDecodingError) -> (DIB, pixelOffset: Int) {
        guard bytes.count >= 14, bytes[0] == 0x42, bytes[1] == 0x4D, let pixelOffset = bytes.littleEndian(at: 10, size: 4) else {
            throw ImageDecodingError(code: .corrupt, format: .bmp, detail: "truncated file header")
        }
        let bitmap = try DIB(bytes, at: 14, format: .bmp)
        // The header's size was read by DIB: the pixels cannot start inside it.
        guard let headerSize = bytes.littleEndian(at: 14, size: 4), pixelOffset >= 14 + headerSize else {
            throw ImageDecodingError(code: .corrupt, format: .bmp, detail: "the pixel data offset \(pixelOffset) is inside the headers")
        }
        return (bitmap, pixelOffset)
    }
}
