import Foundation
import ImagoCodecs

extension FormatFixtures {
    /// One image of an ICO file: a PNG, or a bitmap with its mask.
    public enum IconImage {
        /// An embedded PNG file.
        case png(Data)
        /// A bitmap: ``bitmap(_:pixelData:)`` with the header's height
        /// doubled, the colour rows, then the mask rows (`maskData`).
        case bitmap(BitmapHeader, pixelData: [UInt8], maskData: [UInt8])

        var bytes: [UInt8] {
            switch self {
            case .png(let data): return [UInt8](data)
            case .bitmap(var header, let pixelData, let maskData):
                header.height *= 2
                return FormatFixtures.bitmap(header, pixelData: pixelData + maskData)
            }
        }
    }

    /// An icon image of `image` (RGB or RGBA): 24- or 32-bit bottom-up
    /// rows, and a mask with `transparent` pixels set (none by default).
    public static func iconBitmap(_ image: Image, bitCount: Int? = nil, transparent: (Int, Int) -> Bool = { _, _ in false }) -> IconImage {
        let bits = bitCount ?? (image.pixelFormat == .rgba8 ? 32 : 24)
        let rows = (0..<image.height).reversed().map { y in
            (0..<image.width).map { x in
                let color = rgba(image, x: x, y: y).map(Int.init)
                return color[2] | color[1] << 8 | color[0] << 16 | (bits == 32 ? color[3] << 24 : 0)
            }
        }
        let mask = (0..<image.height).reversed().map { y in (0..<image.width).map { x in transparent(x, y) ? 1 : 0 } }
        return .bitmap(
            BitmapHeader(width: image.width, height: image.height, bitCount: bits), pixelData: bitmapRows(rows, bitCount: bits),
            maskData: bitmapRows(mask, bitCount: 1)
        )
    }

    /// An ICO (or with `cursor`, CUR) file of `images`; the directory's
    /// sizes and bit counts are given per image (0 stands for 256).
    public static func ico(_ images: [(image: IconImage, width: Int, height: Int, bitCount: Int)], cursor: Bool = false) -> Data {
        var directory = littleEndian(0, 2) + littleEndian(cursor ? 2 : 1, 2) + littleEndian(images.count, 2)
        var data: [UInt8] = []
        let dataStart = 6 + 16 * images.count
        for entry in images {
            let bytes = entry.image.bytes
            directory += [UInt8(entry.width & 0xFF), UInt8(entry.height & 0xFF), 0, 0]
            directory += littleEndian(cursor ? 3 : 1, 2) + littleEndian(cursor ? 4 : entry.bitCount, 2)
            directory += littleEndian(bytes.count, 4) + littleEndian(dataStart + data.count, 4)
            data += bytes
        }
        return Data(directory + data)
    }
}
