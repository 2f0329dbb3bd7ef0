/// Compresses a GIF frame's colour indices: variable-width LZW codes,
/// least significant bit first, from `codeSize + 1` bits up to 12, starting
/// with a clear code and ending with the end code (GIF89a, appendix F).
/// When the table is full (4096 codes) a clear code starts it over, as
/// giflib does, which every decoder reads.
///
/// The table maps a string (its code) and the index after it to the code
/// of the longer string, in an open-addressing hash table twice the size
/// of the codes, so that a lookup is a probe or two.
struct GIFLZWEncoder {
    private static let maximumCodes = 4096
    /// Twice the codes, so that probe runs stay short.
    private static let slotCount = 8192
    /// A key no string has (keys are a 12-bit code and an 8-bit index).
    private static let empty = UInt32.max

    /// The compressed data of `indices` for a frame whose code size byte is
    /// `codeSize` (2...8), in sub-blocks of at most 255 bytes, each after
    /// its length, without the empty block that ends them. Indices are
    /// masked to `codeSize` bits, as giflib masks them.
    static func encode(_ indices: UnsafeBufferPointer<UInt8>, codeSize: Int) -> [UInt8] {
        let clear = 1 << codeSize
        let mask = UInt8(truncatingIfNeeded: clear - 1)
        let end = clear + 1
        let keys = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: slotCount)
        let codes = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: slotCount)
        defer {
            keys.deallocate()
            codes.deallocate()
        }
        keys.initialize(repeating: empty)
        var output = BitWriter(capacity: indices.count + 16)
        var width = codeSize + 1
        var next = clear + 2
        output.write(clear, width: width)
        guard let first = indices.first else {
            output.write(end, width: width)
            return output.finish()
        }
        var string = Int(first & mask)
        for index in indices.dropFirst() {
            let index = index & mask
            let key = UInt32(string) << 8 | UInt32(index)
            var slot = Int((key &* 0x9E37_79B1) >> 19)
            while keys[slot] != key, keys[slot] != empty { slot = (slot + 1) & (slotCount - 1) }
            if keys[slot] == key {
                string = Int(codes[slot])
                continue
            }
            output.write(string, width: width)
            if next < maximumCodes {
                keys[slot] = key
                codes[slot] = UInt16(next)
                next += 1
                // The decoder, one entry behind, widens its codes once its
                // next free code reaches the width's limit: after the code
                // that takes this encoder's `next` one past it.
                if next > 1 << width, width < 12 { width += 1 }
            } else {
                output.write(clear, width: width)
                keys.update(repeating: empty)
                width = codeSize + 1
                next = clear + 2
            }
            string = Int(index)
        }
        output.write(string, width: width)
        // The decoder adds an entry for that last code too, which may widen
        // the end code.
        if next == 1 << width, width < 12 { width += 1 }
        output.write(end, width: width)
        return output.finish()
    }

    /// Bytes filled with codes least significant bit first.
    private struct BitWriter {
        private var bytes: [UInt8] = []
        private var bits: UInt64 = 0
        private var bitCount = 0

        init(capacity: Int) { bytes.reserveCapacity(capacity) }

        mutating func write(_ code: Int, width: Int) {
            bits |= UInt64(code) << UInt64(bitCount)
            bitCount += width
            while bitCount >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
                bitCount -= 8
            }
        }

        /// The bytes written, in sub-blocks.
        mutating func finish() -> [UInt8] {
            if bitCount > 0 { bytes.append(UInt8(truncatingIfNeeded: bits)) }
            var blocks: [UInt8] = []
            blocks.reserveCapacity(bytes.count + bytes.count / 255 + 1)
            for start in stride(from: 0, to: bytes.count, by: 255) {
                let end = min(bytes.count, start + 255)
                blocks.append(UInt8(end - start))
                blocks += bytes[start..<end]
            }
            return blocks
        }
    }
}
