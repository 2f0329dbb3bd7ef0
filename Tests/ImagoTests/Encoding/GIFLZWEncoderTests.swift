import Foundation
import ImagoCodecFixtures
import Testing

@testable import ImagoCodecs

@Suite("GIF LZW encoder: read back by giflib, gifsicle and our decoder, at every code size and length, through table resets")
struct GIFLZWEncoderTests {
    /// Seeded indices below `1 << bits`, in runs of up to `run`, so that
    /// strings repeat as they do in images.
    static func indices(count: Int, bits: Int, run: Int, seed: UInt32) -> [UInt8] {
        var state = seed
        var output: [UInt8] = []
        while output.count < count {
            state = state &* 1_664_525 &+ 1_013_904_223
            let value = UInt8(truncatingIfNeeded: state >> 16) & UInt8(truncatingIfNeeded: (1 << bits) - 1)
            output += repeatElement(value, count: min(count - output.count, 1 + Int(state >> 28) % run))
        }
        return output
    }

    /// A one-frame GIF of `indices` (`width` wide) over a grey table of `1 << bits` colours, written by GIFFileWriter.
    static func gif(_ indices: [UInt8], width: Int, bits: Int) throws -> Data {
        let colors = (0..<(1 << bits)).map { (red: UInt8($0), green: UInt8($0), blue: UInt8($0)) }
        let file = try GIFFileWriter()
        let height = indices.count / width
        try file.putScreen(width: width, height: height, colors: colors)
        let palette = GIFPalette(colors: colors, indices: indices, transparentIndex: nil)
        try file.putFrame(GIFRect(x: 0, y: 0, width: width, height: height), palette: palette, usesGlobalColors: true, control: nil)
        return try file.close()
    }

    /// The sub-blocks of `blocks` joined, as GIFReader hands them to the decoder.
    static func joined(_ blocks: [UInt8]) -> [UInt8] {
        var (joined, offset) = ([UInt8](), 0)
        while offset < blocks.count {
            joined += blocks[(offset + 1)..<min(blocks.count, offset + 1 + Int(blocks[offset]))]
            offset += Int(blocks[offset]) + 1
        }
        return joined
    }

    /// The codes of `data` up to the end code, read with the widths GIF89a's
    /// appendix F gives them (unlike decoders, which stop at the last pixel
    /// and never read the end code), and how many bytes they took.
    static func codes(_ data: [UInt8], codeSize: Int) -> (codes: [Int], bytes: Int) {
        let (clear, end) = (1 << codeSize, (1 << codeSize) + 1)
        var (width, next, afterClear) = (codeSize + 1, clear + 2, true)
        var (codes, position) = ([Int](), 0)
        while position + width <= data.count * 8 {
            let code = (0..<width).reduce(0) { $0 | Int(data[(position + $1) / 8] >> UInt8((position + $1) % 8) & 1) << $1 }
            position += width
            codes.append(code)
            if code == end { break }
            if code == clear {
                (width, next, afterClear) = (codeSize + 1, clear + 2, true)
            } else if afterClear {
                afterClear = false
            } else if next < 4096 {
                next += 1
                if next == 1 << width, width < 12 { width += 1 }
            }
        }
        return (codes, (position + 7) / 8)
    }

    @Test("every length from 1 to 300 pixels at code sizes 2 and 8 reads back in giflib, and ends with the end code at its width", arguments: [1, 8])
    func lengths(bits: Int) throws {
        let codeSize = max(2, bits)
        for count in 1...300 {
            let indices = Self.indices(count: count, bits: bits, run: 3, seed: UInt32(count))
            let data = try Self.gif(indices, width: count, bits: bits)
            #expect(try FormatFixtures.giflibIndices(data) == [indices], "\(count) pixels")
            let stream = Self.joined(indices.withUnsafeBufferPointer { GIFLZWEncoder.encode($0, codeSize: codeSize) })
            let (codes, bytes) = Self.codes(stream, codeSize: codeSize)
            #expect(codes.first == 1 << codeSize && codes.last == (1 << codeSize) + 1 && bytes == stream.count, "\(count) pixels")
        }
    }

    @Test("large frames, noisy and flat, at every code size, read back alike in giflib and GIFLZWDecoder", arguments: 1...8)
    func largeFrames(bits: Int) throws {
        for (run, seed) in [(1, 1), (4, 2), (200, 3)] as [(Int, UInt32)] {
            let indices = Self.indices(count: 300 * 200, bits: bits, run: run, seed: seed)
            let data = try Self.gif(indices, width: 300, bits: bits)
            #expect(try FormatFixtures.giflibIndices(data) == [indices], "runs of up to \(run)")
            // gifsicle decodes it to resize it, and would warn of bad data.
            let warnings = try CommandLineTool.gifsicle.output(["--resize-width", "10", "-o", "/dev/null"], on: data, fileExtension: "gif")
            #expect(warnings.isEmpty, "\(warnings)")
            let codeSize = max(2, bits)
            var decoded = [UInt8](repeating: 0, count: indices.count)
            let blocks = indices.withUnsafeBufferPointer { GIFLZWEncoder.encode($0, codeSize: codeSize) }
            let joined = Self.joined(blocks)
            try joined.withUnsafeBufferPointer { (joined) throws(GIFLZWDecoder.Failure) in
                try decoded.withUnsafeMutableBufferPointer { (decoded) throws(GIFLZWDecoder.Failure) in
                    try GIFLZWDecoder.decode(joined, minimumCodeSize: codeSize, into: decoded)
                }
            }
            #expect(decoded == indices, "runs of up to \(run)")
        }
    }

    @Test("compresses as giflib does: a flat frame to a few hundred bytes, noise and runs within 1% of what giflib writes")
    func ratio() throws {
        let grays = (0..<16).map { (UInt8($0), UInt8($0), UInt8($0)) }
        let frames = [
            [UInt8](repeating: 3, count: 240 * 135), Self.indices(count: 240 * 135, bits: 4, run: 1, seed: 2),
            Self.indices(count: 240 * 135, bits: 4, run: 6, seed: 3),
        ]
        for (index, indices) in frames.enumerated() {
            // Given 240x135 indices of a 16-colour table
            // When written by GIFFileWriter and by giflib's own compressor
            let ours = try Self.gif(indices, width: 240, bits: 4).count
            let frame = FormatFixtures.GIFFrame(width: 240, height: 135, indices: indices)
            let giflib = try FormatFixtures.gif(width: 240, height: 135, palette: grays, frames: [frame]).count
            // Then ours is about as large (the two clear a full table one code apart)
            #expect(Double(ours) <= Double(giflib) * 1.01, "frame \(index): \(ours) bytes, giflib \(giflib)")
            if index == 0 { #expect(ours < 400, "\(ours) bytes") }
        }
    }
}
