import Foundation

/// JPEG's marker segments, read without decoding. Every length is
/// bounds-checked: the bytes come from the network.
enum JPEGSegments {
    /// Calls `body` with each segment's marker and payload (after its two
    /// length bytes), in order, up to the first scan; stops at a damaged
    /// length, or when `body` returns false.
    static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (UInt8, UnsafeRawBufferPointer) -> Bool) {
        guard bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        var offset = 2  // after SOI
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            // Start of scan or end of image: no metadata after this point.
            if marker == 0xDA || marker == 0xD9 { return }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return }
            guard body(marker, UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 2 + length)])) else { return }
            offset += 2 + length
        }
    }

    /// The ICC profile of APP2 segments, which split it into chunks
    /// numbered 1...count; nil when there is none or a chunk is missing.
    static func iccProfile(in bytes: UnsafeRawBufferPointer) -> Data? {
        var chunks: [Int: UnsafeRawBufferPointer] = [:]
        var count = 0
        forEach(in: bytes) { marker, payload in
            if marker == 0xE2, let chunk = payload.dropping(prefix: "ICC_PROFILE\0"), chunk.count > 2 {
                count = Int(chunk[1])
                chunks[Int(chunk[0])] = UnsafeRawBufferPointer(rebasing: chunk[2...])
            }
            return true
        }
        let ordered = (1...max(1, count)).compactMap { chunks[$0] }
        guard count > 0, ordered.count == count else { return nil }
        return ordered.reduce(into: Data()) { $0.append(contentsOf: $1) }
    }

    /// Where metadata segments go in an encoder's output: after SOI and the
    /// JFIF segment (APP0) if there is one; nil if `bytes` is not a JPEG.
    static func insertionPoint(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        guard bytes[2] == 0xFF, bytes[3] == 0xE0, bytes.count >= 6 else { return 2 }
        let end = 4 + (Int(bytes[4]) << 8 | Int(bytes[5]))
        return end <= bytes.count ? end : nil
    }

    /// A segment with `marker` and `payload`, its length included; nil if
    /// the payload is longer than a segment holds.
    static func segment(_ marker: UInt8, _ payload: some Collection<UInt8>) -> [UInt8]? {
        let length = payload.count + 2
        guard length <= 0xFFFF else { return nil }
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }
}

/// The chunks of a RIFF file (WebP): a four-character code, a little-endian
/// size, the payload padded to an even length. Every size is bounds-checked.
enum RIFFChunks {
    /// Calls `body` with each chunk's code and payload after the 12-byte
    /// RIFF header; stops at a damaged size, or when `body` returns false.
    static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool) {
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = (0..<4).reduce(0) { $0 | Int(bytes[offset + 4 + $1]) << (8 * $1) }
            guard size <= bytes.count - offset - 8 else { return }
            let code = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 4)])
            guard body(code, UnsafeRawBufferPointer(rebasing: bytes[(offset + 8)..<(offset + 8 + size)])) else { return }
            offset += 8 + size + (size & 1)
        }
    }
}

extension UnsafeRawBufferPointer {
    /// The unsigned integer of `size` bytes (at most 8) at `offset`, in
    /// the byte order given; nil if any of them is outside the buffer.
    func integer(at offset: Int, size: Int, bigEndian: Bool) -> Int? {
        guard offset >= 0, size <= count, offset <= count - size else { return nil }
        return (0..<size).reduce(0) { value, index in
            value | Int(self[offset + index]) << (8 * (bigEndian ? size - 1 - index : index))
        }
    }

    /// The little-endian unsigned integer of `size` bytes at `offset`; nil past the end.
    func littleEndian(at offset: Int, size: Int) -> Int? { integer(at: offset, size: size, bigEndian: false) }

    /// The bytes at `offset..<offset + length`; nil if they are not all in the buffer.
    func slice(at offset: Int, length: Int) -> UnsafeRawBufferPointer? {
        guard offset >= 0, length >= 0, offset <= count, length <= count - offset else { return nil }
        return UnsafeRawBufferPointer(rebasing: self[offset..<(offset + length)])
    }

    /// Whether the bytes are `text`'s UTF-8 bytes.
    func isText(_ text: String) -> Bool { elementsEqual(text.utf8) }

    /// The bytes after `prefix`, or nil if they do not start with it.
    func dropping(prefix: String) -> UnsafeRawBufferPointer? {
        starts(with: prefix.utf8) ? UnsafeRawBufferPointer(rebasing: self[(startIndex + prefix.utf8.count)...]) : nil
    }
}
