import ImagoCodecFixtures
import Testing

@testable import ImagoCodecs

@Suite("GIF LZW decoder: strings, the code not yet in the table, a full table, damaged data")
struct GIFLZWDecoderTests {
    /// `codes` packed least significant bit first, each `width(i)` bits,
    /// where the widths follow GIF89a's appendix F: `minimumCodeSize + 1`
    /// after a clear, one more once the next free code reaches the width's
    /// limit (the first code after a clear adds no entry), 12 at most.
    static func pack(_ codes: [Int], minimumCodeSize: Int) -> [UInt8] {
        let clear = 1 << minimumCodeSize
        var (width, next, afterClear) = (minimumCodeSize + 1, clear + 2, true)
        var (bytes, bits, bitCount) = ([UInt8](), 0, 0)
        for code in codes {
            bits |= code << bitCount
            bitCount += width
            while bitCount >= 8 {
                bytes.append(UInt8(bits & 0xFF))
                bits >>= 8
                bitCount -= 8
            }
            if code == clear {
                (width, next, afterClear) = (minimumCodeSize + 1, clear + 2, true)
            } else if afterClear {
                afterClear = false
            } else if next < 4096 {
                next += 1
                if next == 1 << width, width < 12 { width += 1 }
            }
        }
        if bitCount > 0 { bytes.append(UInt8(bits)) }
        return bytes
    }

    static func decode(_ data: [UInt8], minimumCodeSize: Int, count: Int) throws(GIFLZWDecoder.Failure) -> [UInt8] {
        var output = [UInt8](repeating: 0xEE, count: count)
        try data.withUnsafeBufferPointer { (data) throws(GIFLZWDecoder.Failure) in
            try output.withUnsafeMutableBufferPointer { (output) throws(GIFLZWDecoder.Failure) in
                try GIFLZWDecoder.decode(data, minimumCodeSize: minimumCodeSize, into: output)
            }
        }
        return output
    }

    @Test("strings from the table, and the code not yet in it (the previous string and its first index)")
    func strings() throws {
        // Given codes of code size 2 (clear 4, end 5): 1, 2, then 6 ("1 2"),
        // then 8, the next free code (the previous string, "1 2", and its
        // first index, 1)
        let data = Self.pack([4, 1, 2, 6, 8, 5], minimumCodeSize: 2)
        // When decoded
        let output = try Self.decode(data, minimumCodeSize: 2, count: 7)
        // Then
        #expect(output == [1, 2, 1, 2, 1, 2, 1])
    }

    @Test("a full table takes no entries until a clear; codes stay 12 bits; the clear starts over")
    func fullTable() throws {
        // Given, at code size 2, a clear, 4090 literals (the 4089 after the
        // first fill the table), 10 literals more at 12 bits, a clear, and
        // three codes at 3 bits again
        let literals = (0..<4100).map { $0 % 4 }
        let data = Self.pack([4] + literals + [4, 3, 1, 6, 5], minimumCodeSize: 2)
        // When decoded
        let output = try Self.decode(data, minimumCodeSize: 2, count: 4104)
        // Then every literal comes back, and the string after the clear
        #expect(Array(output.prefix(4100)) == literals.map { UInt8($0) })
        #expect(Array(output.suffix(4)) == [3, 1, 3, 1])
    }

    @Test("codes past the pixels asked for are ignored, even a string cut in two")
    func extraCodes() throws {
        let data = Self.pack([4, 1, 2, 6, 6, 6, 5], minimumCodeSize: 2)
        let output = try Self.decode(data, minimumCodeSize: 2, count: 5)
        #expect(output == [1, 2, 1, 2, 1])
    }

    @Test("large frames compressed by giflib, of noise and of runs, at 4 and 8 bits, decode exactly", arguments: [4, 8])
    func giflibFrames(bits: Int) throws {
        let palette: [(UInt8, UInt8, UInt8)] = (0..<(1 << bits)).map { index in
            let value = UInt8(index)
            return (value, 255 - value, value / 2)
        }
        var state: UInt32 = 5
        for run in [1, 3, 40] {
            // Given 300x200 seeded indices in runs of up to `run`, written by giflib
            var indices: [UInt8] = []
            while indices.count < 300 * 200 {
                state = state &* 1_664_525 &+ 1_013_904_223
                let value = UInt8(truncatingIfNeeded: state >> 16) & UInt8((1 << bits) - 1)
                indices += repeatElement(value, count: min(300 * 200 - indices.count, 1 + Int(state >> 26) % run))
            }
            let frame = FormatFixtures.GIFFrame(width: 300, height: 200, indices: indices)
            let data = try FormatFixtures.gif(width: 300, height: 200, palette: palette, frames: [frame])
            // When decoded
            let image = try GIFDecoder().decode(data, options: ImageDecodingOptions())
            // Then every pixel has its index's colour
            let expected: [UInt8] = indices.flatMap { index -> [UInt8] in
                let color = palette[Int(index)]
                return [color.0, color.1, color.2, 255]
            }
            let wrong = zip(image.pixels, expected).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) }
            #expect(image.pixels.count == expected.count && wrong == 0, "runs of up to \(run): \(wrong) bytes wrong")
        }
    }

    @Test("damaged data is an error: a code past the next free one, a string first after a clear, too few pixels, a bad code size")
    func damaged() {
        #expect(throws: GIFLZWDecoder.Failure.invalidCode) {
            try Self.decode(Self.pack([4, 1, 7], minimumCodeSize: 2), minimumCodeSize: 2, count: 4)
        }
        #expect(throws: GIFLZWDecoder.Failure.invalidCode) { try Self.decode(Self.pack([4, 6], minimumCodeSize: 2), minimumCodeSize: 2, count: 4) }
        #expect(throws: GIFLZWDecoder.Failure.tooFewPixels(decoded: 3)) {
            try Self.decode(Self.pack([4, 1, 6, 5], minimumCodeSize: 2), minimumCodeSize: 2, count: 4)
        }
        // (At code size 7, codes are 8 bits: the data ends with the last code.)
        #expect(throws: GIFLZWDecoder.Failure.tooFewPixels(decoded: 2)) {
            try Self.decode(Self.pack([128, 1, 2], minimumCodeSize: 7), minimumCodeSize: 7, count: 4)
        }
        #expect(throws: GIFLZWDecoder.Failure.codeSize(9)) { try Self.decode([0, 0], minimumCodeSize: 9, count: 4) }
        #expect(throws: GIFLZWDecoder.Failure.codeSize(0)) { try Self.decode([0, 0], minimumCodeSize: 0, count: 4) }
    }
}
