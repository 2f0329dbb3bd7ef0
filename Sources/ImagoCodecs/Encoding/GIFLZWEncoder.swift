/// Compresses a GIF frame's colour indices: variable-width LZW codes,
/// least significant bit first, from `codeSize + 1` bits up to 12, starting
/// with a clear code and ending with the end code (GIF89a, appendix F).
/// When the table is full (4096 codes) a clear code starts it over, as
/// giflib does, which every decoder reads.
///
/// The table maps a string (its code) and the index after it to the code
/// of the longer string, in an open-addressing hash table twice the size
/// of the codes, so that a lookup is a probe or two. A slot holds the key
/// (12 bits of code, 8 of index) above the 12-bit code it maps to: one
/// load a probe.
struct GIFLZWEncoder {
    private static let maximumCodes = 4096
    /// Twice the codes, so that probe runs stay short.
    private static let slotCount = 8192
    /// A slot no entry fills: an entry's code is above its string's, so no
    /// entry maps string 4095 to code 4095.
    private static let empty = UInt32.max

    /// The compressed data of `indices` for a frame whose code size byte is
    /// `codeSize` (2...8), in sub-blocks of at most 255 bytes, each after
    /// its length, without the empty block that ends them. Indices are
    /// masked to `codeSize` bits, as giflib masks them.
    static func encode(_ indices: UnsafeBufferPointer<UInt8>, codeSize: Int) -> [UInt8] {
        // At most a 12-bit code a pixel, the clear and end codes, a clear
        // every 4000 codes or so, and a length byte every 255 bytes.
        var blocks = [UInt8](repeating: 0, count: (indices.count * 3 / 2 + 64) * 256 / 255 + 8)
        let count = blocks.withUnsafeMutableBufferPointer { blocks in
            var output = BlockWriter(blocks)
            compress(indices, codeSize: codeSize, into: &output)
            return output.finish()
        }
        blocks.removeLast(blocks.count - count)
        return blocks
    }

    private static func compress(_ indices: UnsafeBufferPointer<UInt8>, codeSize: Int, into output: inout BlockWriter) {
        let clear = 1 << codeSize
        let mask = UInt8(truncatingIfNeeded: clear - 1)
        let end = clear + 1
        let slots = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: slotCount)
        defer { slots.deallocate() }
        slots.initialize(repeating: empty)
        var width = codeSize + 1
        var next = clear + 2
        output.write(clear, width: width)
        guard let first = indices.first else {
            output.write(end, width: width)
            return
        }
        var string = Int(first & mask)
        for index in indices.dropFirst() {
            let index = index & mask
            let key = UInt32(truncatingIfNeeded: string) << 8 | UInt32(index)
            var slot = Int(truncatingIfNeeded: (key &* 0x9E37_79B1) >> 19)
            var entry = slots[slot]
            while entry != empty, entry >> 12 != key {
                slot = (slot &+ 1) & (slotCount - 1)
                entry = slots[slot]
            }
            if entry != empty {
                string = Int(truncatingIfNeeded: entry & 0xFFF)
                continue
            }
            output.write(string, width: width)
            if next < maximumCodes {
                slots[slot] = key << 12 | UInt32(truncatingIfNeeded: next)
                next += 1
                // The decoder, one entry behind, widens its codes once its
                // next free code reaches the width's limit: after the code
                // that takes this encoder's `next` one past it.
                if next > 1 << width, width < 12 { width += 1 }
            } else {
                output.write(clear, width: width)
                slots.update(repeating: empty)
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
    }

    /// Codes packed least significant bit first into sub-blocks: a length
    /// byte, then up to 255 bytes.
    private struct BlockWriter {
        private let buffer: UnsafeMutableBufferPointer<UInt8>
        private var bits: UInt64 = 0
        private var bitCount = 0
        /// Where the next byte goes, and where the current block's length byte is.
        private var position = 1
        private var blockStart = 0

        /// A writer into `buffer`, which must hold every byte written.
        init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

        mutating func write(_ code: Int, width: Int) {
            bits |= UInt64(truncatingIfNeeded: code) << UInt64(bitCount)
            bitCount &+= width
            while bitCount >= 8 {
                append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
                bitCount &-= 8
            }
        }

        private mutating func append(_ byte: UInt8) {
            if position &- blockStart > 255 {
                buffer[blockStart] = 255
                blockStart = position
                position &+= 1
            }
            buffer[position] = byte
            position &+= 1
        }

        /// Ends the last block; returns how many bytes were written.
        mutating func finish() -> Int {
            if bitCount > 0 { append(UInt8(truncatingIfNeeded: bits)) }
            buffer[blockStart] = UInt8(truncatingIfNeeded: position &- blockStart &- 1)
            return position
        }
    }
}
