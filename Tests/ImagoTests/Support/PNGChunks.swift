import Foundation

/// Hand-built PNG files, for glitches no encoder writes.
enum PNGChunks {
    static let signature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

    /// A chunk: length, type, payload, CRC of type and payload.
    static func chunk(_ type: String, _ payload: Data) -> Data {
        var body = Data(type.utf8)
        body.append(payload)
        var chunk = Data()
        withUnsafeBytes(of: UInt32(payload.count).bigEndian) { chunk.append(contentsOf: $0) }
        chunk.append(body)
        withUnsafeBytes(of: crc32(body).bigEndian) { chunk.append(contentsOf: $0) }
        return chunk
    }

    /// An IHDR payload (no interlace).
    static func header(width: UInt32, height: UInt32, bitDepth: UInt8, colorType: UInt8) -> Data {
        var payload = Data()
        for value in [width, height] { withUnsafeBytes(of: value.bigEndian) { payload.append(contentsOf: $0) } }
        payload.append(contentsOf: [bitDepth, colorType, 0, 0, 0])
        return payload
    }

    /// `bytes` as a zlib stream of stored (uncompressed) deflate blocks.
    static func zlibStored(_ bytes: [UInt8]) -> Data {
        var stream = Data([0x78, 0x01])
        var blocks = stride(from: 0, to: bytes.count, by: 65_535).map { bytes[$0..<min(bytes.count, $0 + 65_535)] }
        if blocks.isEmpty { blocks = [[]] }
        for (index, block) in blocks.enumerated() {
            stream.append(index == blocks.count - 1 ? 1 : 0)
            let length = UInt16(block.count)
            withUnsafeBytes(of: length.littleEndian) { stream.append(contentsOf: $0) }
            withUnsafeBytes(of: (~length).littleEndian) { stream.append(contentsOf: $0) }
            stream.append(contentsOf: block)
        }
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        withUnsafeBytes(of: (b << 16 | a).bigEndian) { stream.append(contentsOf: $0) }
        return stream
    }

    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
