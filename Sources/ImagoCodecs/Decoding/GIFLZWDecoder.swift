/// Decompresses a GIF frame's image data: variable-width LZW codes, least
/// significant bit first, from `minimumCodeSize + 1` bits up to 12, with a
/// clear code (`1 << minimumCodeSize`) that resets the table and an end
/// code after it (GIF89a, appendix F).
///
/// The table keeps, for each code, where its string was first written in
/// the output and its length: a code's string is the previous code's
/// string and the first index of the string after it, which the output
/// holds right there. So a string is a copy from earlier in the output
/// (LZ77-like), with no walk along prefixes. A full table (4096 codes)
/// takes no more entries until a clear code, as encoders that defer the
/// clear expect.
struct GIFLZWDecoder {
    /// Why decoding stopped short of filling the output.
    enum Failure: Error, Equatable {
        /// The code size byte is outside 1...8.
        case codeSize(Int)
        /// A code past the next free one, or a string code first after a clear.
        case invalidCode
        /// The data (or an end code) came before every pixel was decoded.
        case tooFewPixels(decoded: Int)
    }

    private static let maximumCodes = 4096

    /// Decodes `data` (the image data's sub-blocks joined) into `output`,
    /// which it fills; codes past its end are ignored, as decoders do.
    static func decode(
        _ data: UnsafeBufferPointer<UInt8>, minimumCodeSize: Int, into output: UnsafeMutableBufferPointer<UInt8>
    ) throws(Failure) {
        guard (1...8).contains(minimumCodeSize) else { throw .codeSize(minimumCodeSize) }
        guard let base = output.baseAddress else { return }
        let clear = 1 << minimumCodeSize
        let end = clear + 1
        // Where each code's string starts in the output, and its length.
        let starts = UnsafeMutableBufferPointer<Int32>.allocate(capacity: maximumCodes)
        let lengths = UnsafeMutableBufferPointer<Int32>.allocate(capacity: maximumCodes)
        defer {
            starts.deallocate()
            lengths.deallocate()
        }
        var bits: UInt64 = 0
        var bitCount = 0
        var position = 0
        var width = minimumCodeSize + 1
        var next = clear + 2
        // Where the previous code's string was written and its length; a
        // length of 0 right after a clear.
        var previousStart = 0
        var previousLength = 0
        var written = 0
        let count = output.count
        while written < count {
            if bitCount < width {
                if let input = data.baseAddress, position &+ 8 <= data.count {
                    // Eight bytes read at once; as many whole ones kept as fit.
                    let word = UInt64(littleEndian: UnsafeRawPointer(input + position).loadUnaligned(as: UInt64.self))
                    bits |= word << UInt64(bitCount)
                    position &+= (63 &- bitCount) >> 3
                    bitCount |= 56
                } else {
                    // Whole bytes up to 56 bits, so that the shift never overflows.
                    while bitCount <= 56, position < data.count {
                        bits |= UInt64(data[position]) << UInt64(bitCount)
                        position += 1
                        bitCount += 8
                    }
                    guard bitCount >= width else { break }
                }
            }
            let code = Int(truncatingIfNeeded: bits & ((1 << UInt64(width)) &- 1))
            bits >>= UInt64(width)
            bitCount &-= width
            if code == clear {
                width = minimumCodeSize + 1
                next = clear + 2
                previousLength = 0
                continue
            }
            if code == end { break }
            let length: Int
            if previousLength == 0 {
                // The first code after a clear is a single index.
                guard code < clear else { throw .invalidCode }
                length = 1
            } else {
                if next < maximumCodes {
                    // The entry for the previous string and the first index
                    // of this one, which will follow it in the output.
                    starts[next] = Int32(truncatingIfNeeded: previousStart)
                    lengths[next] = Int32(truncatingIfNeeded: previousLength &+ 1)
                    next &+= 1
                    if next == 1 << width, width < 12 { width &+= 1 }
                }
                // The code just added is the one not yet in the table before
                // it: the previous string and its own first index.
                guard code < next else { throw .invalidCode }
                length = code < clear ? 1 : Int(lengths[code])
            }
            if code < clear {
                base[written] = UInt8(truncatingIfNeeded: code)
            } else {
                // The string's copy ends at the first index written here when
                // the code is the one just added: all but the last index are
                // earlier in the output, and the last is read after them.
                let source = base + Int(starts[code])
                let target = base + written
                if length <= 8, written &+ 8 <= count, source + 8 <= target {
                    // Most strings are short: eight bytes copied at once, the
                    // ones past the string overwritten by the strings after it.
                    UnsafeMutableRawPointer(target).storeBytes(of: UnsafeRawPointer(source).loadUnaligned(as: UInt64.self), as: UInt64.self)
                } else {
                    let copied = min(length, count &- written)
                    for offset in 0..<min(copied, length &- 1) { target[offset] = source[offset] }
                    if copied == length { target[length &- 1] = source[length &- 1] }
                }
            }
            previousStart = written
            previousLength = length
            written = min(count, written &+ length)
        }
        guard written == count else { throw .tooFewPixels(decoded: written) }
    }
}
