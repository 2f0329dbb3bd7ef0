import Foundation
import ImagoCodecs

extension FormatFixtures {
    /// A device-independent bitmap's header, as BMP files and ICO entries
    /// store it.
    public struct BitmapHeader {
        /// 12 (BITMAPCOREHEADER), 40 (BITMAPINFOHEADER), 52 and 56 (Adobe's),
        /// 108 (BITMAPV4HEADER) or 124 (BITMAPV5HEADER).
        public var size: Int
        /// The width in pixels.
        public var width: Int
        /// Rows; negative for top-down rows (as stored; an icon's is doubled by ``icon(_:)``).
        public var height: Int
        /// Bits a pixel.
        public var bitCount: Int
        /// 0 BI_RGB, 1 BI_RLE8, 2 BI_RLE4, 3 BI_BITFIELDS, 6 BI_ALPHABITFIELDS.
        public var compression: Int
        /// Red, green, blue (and alpha) masks: in the header from 52 bytes
        /// on, after a 40-byte one.
        public var masks: [UInt32]
        /// RGB entries of the colour table.
        public var palette: [[UInt8]]
        /// The colours-used field; 0 is all of them.
        public var colorsUsed: Int
        /// An ICC profile embedded after the pixels (124-byte headers only).
        public var profile: Data?

        /// A header; the masks and palette empty.
        public init(
            size: Int = 40, width: Int, height: Int, bitCount: Int, compression: Int = 0, masks: [UInt32] = [], palette: [[UInt8]] = [],
            colorsUsed: Int = 0, profile: Data? = nil
        ) {
            self.size = size
            self.width = width
            self.height = height
            self.bitCount = bitCount
            self.compression = compression
            self.masks = masks
            self.palette = palette
            self.colorsUsed = colorsUsed
            self.profile = profile
        }
    }

    /// `value` as `size` little-endian bytes.
    static func littleEndian(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// A bitmap as an ICO entry stores it and a BMP file after its file
    /// header: the header, the masks after a 40-byte header, the colour
    /// table, `pixelData` as given, then the profile (a 124-byte header
    /// says where it is, from the header's start).
    public static func bitmap(_ header: BitmapHeader, pixelData: [UInt8]) -> [UInt8] {
        let tableEntry = header.size == 12 ? 3 : 4
        let masksAfter = header.size == 40 && (header.compression == 3 || header.compression == 6) ? header.masks : []
        let beforePixels = header.size + 4 * masksAfter.count + tableEntry * header.palette.count
        var bytes = littleEndian(header.size, 4)
        if header.size == 12 {
            bytes += littleEndian(header.width, 2) + littleEndian(header.height, 2) + littleEndian(1, 2) + littleEndian(header.bitCount, 2)
        } else {
            bytes += littleEndian(header.width, 4) + littleEndian(header.height, 4) + littleEndian(1, 2) + littleEndian(header.bitCount, 2)
            bytes += littleEndian(header.compression, 4) + littleEndian(pixelData.count, 4) + littleEndian(2835, 4) + littleEndian(2835, 4)
            bytes += littleEndian(header.colorsUsed, 4) + littleEndian(0, 4)
            if header.size >= 52 {
                let masks = (header.masks + [0, 0, 0, 0]).prefix(header.size >= 56 ? 4 : 3)
                bytes += masks.flatMap { littleEndian(Int($0), 4) }
            }
            if header.size >= 108 {
                // Colour space: 'MBED' with a profile, else sRGB; endpoints and gamma unused.
                bytes += littleEndian(header.profile == nil ? 0x7352_4742 : 0x4D42_4544, 4) + [UInt8](repeating: 0, count: 48)
            }
            if header.size >= 124 {
                let profileOffset = beforePixels + pixelData.count
                bytes += littleEndian(4, 4) + littleEndian(header.profile == nil ? 0 : profileOffset, 4)
                bytes += littleEndian(header.profile?.count ?? 0, 4) + littleEndian(0, 4)
            }
        }
        bytes += masksAfter.flatMap { littleEndian(Int($0), 4) }
        for color in header.palette {
            bytes += [color[2], color[1], color[0]] + (tableEntry == 4 ? [0] : [])
        }
        return bytes + pixelData + (header.profile.map { [UInt8]($0) } ?? [])
    }

    /// A BMP file: the 14-byte file header, then ``bitmap(_:pixelData:)``.
    public static func bmp(_ header: BitmapHeader, pixelData: [UInt8]) -> Data {
        let bitmap = bitmap(header, pixelData: pixelData)
        let tableEntry = header.size == 12 ? 3 : 4
        let masksAfter = header.size == 40 && (header.compression == 3 || header.compression == 6) ? header.masks.count : 0
        let pixelOffset = 14 + header.size + 4 * masksAfter + tableEntry * header.palette.count
        return Data(Array("BM".utf8) + littleEndian(14 + bitmap.count, 4) + littleEndian(0, 4) + littleEndian(pixelOffset, 4) + bitmap)
    }

    /// Rows of `bitCount`-bit values (palette indices, or pixels of 16, 24
    /// or 32 bits, little-endian), each padded to 4 bytes, in the order
    /// given (a bottom-up bitmap's rows bottom first).
    public static func bitmapRows(_ rows: [[Int]], bitCount: Int) -> [UInt8] {
        rows.flatMap { row -> [UInt8] in
            var bytes: [UInt8]
            if bitCount < 8 {
                bytes = [UInt8](repeating: 0, count: (row.count * bitCount + 7) / 8)
                for (x, value) in row.enumerated() {
                    let bit = x * bitCount
                    bytes[bit / 8] |= UInt8(value << (8 - bitCount - bit % 8))
                }
            } else {
                bytes = row.flatMap { littleEndian($0, bitCount / 8) }
            }
            return bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
        }
    }

    /// A BMP of `image` (RGB or RGBA): 24-bit BI_RGB pixels for RGB, or
    /// 32-bit ones for RGBA, in a 124-byte header with its alpha mask
    /// (BI_BITFIELDS), or a 40-byte one (BI_RGB, alpha in the fourth byte).
    public static func bmp(_ image: Image, topDown: Bool = false, v5: Bool = true) -> Data {
        let alpha = image.pixelFormat == .rgba8
        let rows = (0..<image.height).map { row -> [Int] in
            let y = topDown ? row : image.height - 1 - row
            return (0..<image.width).map { x in
                let color = rgba(image, x: x, y: y).map(Int.init)
                return color[2] | color[1] << 8 | color[0] << 16 | (alpha ? color[3] << 24 : 0)
            }
        }
        let header = BitmapHeader(
            size: alpha && v5 ? 124 : 40, width: image.width, height: topDown ? -image.height : image.height, bitCount: alpha ? 32 : 24,
            compression: alpha && v5 ? 3 : 0, masks: alpha && v5 ? [0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000] : []
        )
        return bmp(header, pixelData: bitmapRows(rows, bitCount: alpha ? 32 : 24))
    }
}
