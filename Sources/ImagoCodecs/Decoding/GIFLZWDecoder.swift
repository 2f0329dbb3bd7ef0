/// Decompresses a GIF frame's image data: variable-width LZW codes, least
/// significant bit first, from `minimumCodeSize + 1` bits up to 12, with a
/// clear code (`1 << minimumCodeSize`) that resets the table and an end
/// code after it (GIF89a, appendix F).
///
/// The table keeps, for each code, the code of its string without the last
/// index, that last index, the string's first index and its length, so
/// that a string is written in one walk from its end, with no stack. A
/// full table (4096 codes) takes no more entries until a clear code, as
/// encoders that defer the clear expect.
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
        let clear = 1 << minimumCodeSize
        let end = clear + 1
        let prefixes = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: maximumCodes)
        let lasts = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: maximumCodes)
        let firsts = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: maximumCodes)
        let lengths = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: maximumCodes)
        defer {
            prefixes.deallocate()
            lasts.deallocate()
            firsts.deallocate()
            lengths.deallocate()
        }
        for code in 0..<clear {
            prefixes[code] = 0
            lasts[code] = UInt8(truncatingIfNeeded: code)
            firsts[code] = UInt8(truncatingIfNeeded: code)
            lengths[code] = 1
        }
        var bits: UInt64 = 0
        var bitCount = 0
        var position = 0
        var width = minimumCodeSize + 1
        var next = clear + 2
        // The code before this one, or -1 right after a clear.
        var previous = -1
        var written = 0
        let count = output.count
        while written < count {
            if bitCount < width {
                // Whole bytes up to 56 bits, so that the shift never overflows.
                while bitCount <= 56, position < data.count {
                    bits |= UInt64(data[position]) << UInt64(bitCount)
                    position += 1
                    bitCount += 8
                }
                guard bitCount >= width else { break }
            }
            let code = Int(bits & ((1 << UInt64(width)) - 1))
            bits >>= UInt64(width)
            bitCount -= width
            if code == clear {
                width = minimumCodeSize + 1
                next = clear + 2
                previous = -1
                continue
            }
            if code == end { break }
            guard previous >= 0 else {
                // The first code after a clear is a single index.
                guard code < clear else { throw .invalidCode }
                output[written] = UInt8(truncatingIfNeeded: code)
                written += 1
                previous = code
                continue
            }
            let first: UInt8
            if code < next {
                first = firsts[code]
                written = write(code, at: written, into: output, prefixes: prefixes, lasts: lasts, lengths: lengths)
            } else if code == next {
                // The string not yet in the table: the previous one and its
                // own first index.
                first = firsts[previous]
                written = write(previous, at: written, into: output, prefixes: prefixes, lasts: lasts, lengths: lengths)
                if written < count {
                    output[written] = first
                    written += 1
                }
            } else {
                throw .invalidCode
            }
            if next < maximumCodes {
                prefixes[next] = UInt16(truncatingIfNeeded: previous)
                lasts[next] = first
                firsts[next] = firsts[previous]
                lengths[next] = lengths[previous] &+ 1
                next += 1
                if next == 1 << width, width < 12 { width += 1 }
            }
            previous = code
        }
        guard written == count else { throw .tooFewPixels(decoded: written) }
    }

    /// Writes the string of `code` at `start`, cut at the end of `output`;
    /// returns where the next string starts (at most the end).
    @inline(__always)
    private static func write(
        _ code: Int, at start: Int, into output: UnsafeMutableBufferPointer<UInt8>, prefixes: UnsafeMutableBufferPointer<UInt16>,
        lasts: UnsafeMutableBufferPointer<UInt8>, lengths: UnsafeMutableBufferPointer<UInt16>
    ) -> Int {
        let length = Int(lengths[code])
        var code = code
        var position = start + length - 1
        // Indices past the end are walked over, not written.
        while position >= output.count {
            code = Int(prefixes[code])
            position -= 1
        }
        while position > start {
            output[position] = lasts[code]
            code = Int(prefixes[code])
            position -= 1
        }
        output[start] = lasts[code]
        return min(start + length, output.count)
    }
}
