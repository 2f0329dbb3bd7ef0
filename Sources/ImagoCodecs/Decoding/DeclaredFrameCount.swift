import Foundation

extension ImageHeader {
    /// The number of frames a GIF or WebP declares, counted without
    /// decoding (GIF's image descriptors, found by skipping every block;
    /// WebP's ANMF chunks, 1 for a still WebP); nil for other formats. A
    /// truncated file counts the frames before the damage.
    static func declaredFrameCount(of data: Data, format: ImageFormat) -> Int? {
        switch format {
        case .gif: return data.withUnsafeBytes(gifFrameCount)
        case .webp:
            var count = 0
            data.withUnsafeBytes { bytes in
                RIFFChunks.forEach(in: bytes) { code, _ in
                    if code.isText("ANMF") { count += 1 }
                    return true
                }
            }
            return max(count, 1)
        default: return nil
        }
    }

    /// An AVIF's size, cropped and turned as its decode will be, and its
    /// number of images, from libavif's parse of the container (which
    /// decodes no pixels); nil if it does not parse.
    static func declaredAVIF(_ data: Data) -> (size: ImageSize, frames: Int)? {
        let unbounded = ImageDecodingOptions(maximumPixelCount: .max, maximumFrameCount: .max, convertsToSRGB: false)
        guard let source = try? AVIFFrameSource(data, options: unbounded) else { return nil }
        return (source.uprightSize, Int(source.decoder.pointee.imageCount))
    }

    private static func gifFrameCount(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 13 else { return nil }
        // Header and logical screen descriptor, then the global colour table.
        var offset = 13
        if bytes[10] & 0x80 != 0 { offset += 3 << (Int(bytes[10] & 0x07) + 1) }
        var count = 0
        /// Skips data sub-blocks (a length byte, then that many bytes) to the terminator.
        func skipSubBlocks() -> Bool {
            while offset < bytes.count {
                let length = Int(bytes[offset])
                offset += 1 + length
                if length == 0 { return true }
            }
            return false
        }
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x21:  // extension: introducer, label, sub-blocks
                offset += 2
                guard skipSubBlocks() else { return count }
            case 0x2C:  // image: descriptor, local colour table, LZW code size, sub-blocks
                guard offset + 10 <= bytes.count else { return count }
                let packed = bytes[offset + 9]
                offset += 10
                if packed & 0x80 != 0 { offset += 3 << (Int(packed & 0x07) + 1) }
                offset += 1
                count += 1
                guard skipSubBlocks() else { return count }
            default:  // the trailer (0x3B), or damage
                return count
            }
        }
        return count
    }
}
