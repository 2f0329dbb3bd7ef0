import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("BMP: every header, palettes, bit masks and alpha, RLE, row order, limits, damaged input")
struct BMPDecoderTests {
    typealias Header = FormatFixtures.BitmapHeader
    let options = ImageDecodingOptions()

    /// A 4-colour palette: red, green, blue, white.
    static let palette: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]

    /// Palette indices for a `width`x`height` image, top row first: (x + 2y) % `colors`.
    static func indices(width: Int, height: Int, colors: Int = 4) -> [[Int]] {
        (0..<height).map { y in (0..<width).map { x in (x + 2 * y) % colors } }
    }

    /// The RGB image of `indices` in `palette`.
    static func image(_ indices: [[Int]], _ palette: [[UInt8]]) -> Image {
        Image(width: indices[0].count, height: indices.count, pixelFormat: .rgb8, pixels: indices.flatMap { $0.flatMap { palette[$0] } })!
    }

    @Test("24-bit pixels, bottom-up and top-down, rows padded to 4 bytes")
    func trueColor() throws {
        for width in [1, 2, 3, 5, 37] {
            let image = CodecTests.gradient(width: width, height: 9, format: .rgb8)
            for topDown in [false, true] {
                let data = FormatFixtures.bmp(image, topDown: topDown)
                #expect(ImageFormat(sniffing: data) == .bmp)
                #expect(try BMPDecoder().decode(data, options: options) == image, "width \(width) top-down \(topDown)")
            }
        }
    }

    @Test("every header size reads the same pixels: core (RGB triples), info, Adobe's 52 and 56, V4 and V5", arguments: [12, 40, 52, 56, 108, 124])
    func headers(size: Int) throws {
        let indices = Self.indices(width: 11, height: 6)
        let header = Header(size: size, width: 11, height: 6, bitCount: 8, palette: Self.palette, colorsUsed: size == 12 ? 0 : 4)
        // A core header's table has an entry for every index.
        var full = header
        if size == 12 { full.palette += [[UInt8]](repeating: [0, 0, 0], count: 252) }
        let data = FormatFixtures.bmp(full, pixelData: FormatFixtures.bitmapRows(indices.reversed(), bitCount: 8))
        #expect(try BMPDecoder().decode(data, options: options) == Self.image(indices, Self.palette))
    }

    @Test("1-, 2-, 4- and 8-bit palettes, a short colour table, indices past it black")
    func palettes() throws {
        for bits in [1, 2, 4, 8] {
            let colors = min(4, 1 << bits)
            let indices = Self.indices(width: 13, height: 5, colors: colors)
            let header = Header(width: 13, height: 5, bitCount: bits, palette: Array(Self.palette.prefix(colors)), colorsUsed: colors)
            let data = FormatFixtures.bmp(header, pixelData: FormatFixtures.bitmapRows(indices.reversed(), bitCount: bits))
            #expect(try BMPDecoder().decode(data, options: options) == Self.image(indices, Self.palette), "\(bits) bits")
        }
        // Two colours listed, index 3 used: black.
        let header = Header(width: 4, height: 1, bitCount: 4, palette: Array(Self.palette.prefix(2)), colorsUsed: 2)
        let image = try BMPDecoder().decode(
            FormatFixtures.bmp(header, pixelData: FormatFixtures.bitmapRows([[0, 1, 3, 15]], bitCount: 4)), options: options)
        #expect(image.pixels == [255, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test("16-bit pixels: 5-5-5 by default, 5-6-5 and 4-4-4-4 with bit masks, alpha from a V4 header's mask")
    func sixteenBit() throws {
        // 5-5-5: 31 is full; every red level against green 0 and blue 31.
        let levels = Array(0..<32)
        let plain = FormatFixtures.bmp(
            Header(width: 32, height: 1, bitCount: 16), pixelData: FormatFixtures.bitmapRows([levels.map { $0 << 10 | 31 }], bitCount: 16))
        let image = try BMPDecoder().decode(plain, options: options)
        #expect(image.pixelFormat == .rgb8)
        #expect((0..<32).map { image.pixels[$0 * 3] } == levels.map { UInt8(($0 * 255 + 15) / 31) })
        #expect((0..<32).allSatisfy { image.pixels[$0 * 3 + 1] == 0 && image.pixels[$0 * 3 + 2] == 255 })
        // 5-6-5 in an info header's masks: green has 64 levels.
        let rgb565 = FormatFixtures.bmp(
            Header(width: 2, height: 1, bitCount: 16, compression: 3, masks: [0xF800, 0x07E0, 0x001F]),
            pixelData: FormatFixtures.bitmapRows([[0x07E0, 32 << 5]], bitCount: 16))
        #expect(try BMPDecoder().decode(rgb565, options: options).pixels == [0, 255, 0, 0, 130, 0])
        // 4-4-4-4 in a V4 header: alpha 0, 8 and 15 of 15.
        let argb = FormatFixtures.bmp(
            Header(size: 108, width: 3, height: 1, bitCount: 16, compression: 3, masks: [0x0F00, 0x00F0, 0x000F, 0xF000]),
            pixelData: FormatFixtures.bitmapRows([[0x0F00, 0x80F0, 0xF00F]], bitCount: 16))
        #expect(try BMPDecoder().decode(argb, options: options).pixels == [255, 0, 0, 0, 0, 255, 0, 136, 0, 0, 255, 255])
    }

    @Test("32-bit alpha: a V5 header's mask, or the fourth byte of BI_RGB pixels; all zero is opaque, all 255 too")
    func thirtyTwoBit() throws {
        let rgba = CodecTests.gradient(width: 17, height: 6, format: .rgba8)
        for v5 in [true, false] {
            let decoded = try BMPDecoder().decode(FormatFixtures.bmp(rgba, v5: v5), options: options)
            #expect(decoded == rgba, "V5: \(v5)")
        }
        for alpha: UInt8 in [0, 255] {
            let pixels = rgba.pixels.enumerated().map { $0.offset % 4 == 3 ? alpha : $0.element }
            let flat = try #require(Image(width: 17, height: 6, pixelFormat: .rgba8, pixels: pixels))
            for v5 in [true, false] {
                let decoded = try BMPDecoder().decode(FormatFixtures.bmp(flat, v5: v5), options: options)
                #expect(decoded.pixelFormat == .rgb8, "alpha \(alpha) V5: \(v5)")
                #expect(decoded.pixels == PNGDecoder.keepChannels(pixels, stride: 4, [0, 1, 2]))
            }
        }
        // Masks of another order and width: blue in the top byte, 10-bit red (its top 8 bits kept).
        let odd = FormatFixtures.bmp(
            Header(size: 56, width: 1, height: 1, bitCount: 32, compression: 3, masks: [0x3FF, 0xFC00, 0xFF00_0000, 0]),
            pixelData: FormatFixtures.bitmapRows([[0x3FF | 0x8000 | 0x4000_0000]], bitCount: 32))
        #expect(try BMPDecoder().decode(odd, options: options).pixels == [255, 130, 64])
    }

    @Test("RLE8 and RLE4: runs, literal runs, deltas, ends of line and bitmap; skipped pixels are transparent")
    func runLength() throws {
        // Rows bottom first. Row 0: 3 x index 1, literal 2 3 0, end of line.
        // Row 1: delta (2, 1) skips to row 2 column 2: 2 x index 2, end of bitmap.
        let rle8: [UInt8] = [3, 1, 0, 3, 2, 3, 0, 0, 0, 0, 0, 2, 2, 1, 2, 2, 0, 1]
        let header8 = Header(width: 6, height: 3, bitCount: 8, compression: 1, palette: Self.palette, colorsUsed: 4)
        let image = try BMPDecoder().decode(FormatFixtures.bmp(header8, pixelData: rle8), options: options)
        #expect(image.pixelFormat == .rgba8)
        let clear: [UInt8] = [0, 0, 0, 0]
        let red: [UInt8] = [255, 0, 0, 255]
        let green: [UInt8] = [0, 255, 0, 255]
        let blue: [UInt8] = [0, 0, 255, 255]
        let white: [UInt8] = [255, 255, 255, 255]
        let expected: [[[UInt8]]] = [
            [clear, clear, blue, blue, clear, clear],  // top: stored row 2
            [clear, clear, clear, clear, clear, clear],
            [green, green, green, blue, white, red],
        ]
        #expect(image.pixels == expected.flatMap { $0.flatMap { $0 } })

        // RLE4: a run of 5 alternating 1 and 2, a literal of 3 nibbles (3 0 1, padded), end of line, end of bitmap.
        let rle4: [UInt8] = [5, 0x12, 0, 3, 0x30, 0x10, 0, 0, 0, 1]
        let header4 = Header(width: 8, height: 2, bitCount: 4, compression: 2, palette: Self.palette, colorsUsed: 4)
        let four = try BMPDecoder().decode(FormatFixtures.bmp(header4, pixelData: rle4), options: options)
        let bottom = [green, blue, green, blue, green, white, red, green]
        #expect(four.pixels == ([[UInt8]](repeating: clear, count: 8) + bottom).flatMap { $0 })

        // Every pixel written: opaque RGB.
        let full: [UInt8] = [2, 3, 0, 0, 2, 1, 0, 1]
        let whole = try BMPDecoder().decode(
            FormatFixtures.bmp(Header(width: 2, height: 2, bitCount: 8, compression: 1, palette: Self.palette, colorsUsed: 4), pixelData: full),
            options: options)
        #expect(whole.pixelFormat == .rgb8)
        #expect(whole.pixels == [0, 255, 0, 0, 255, 0, 255, 255, 255, 255, 255, 255])
        // Runs longer than the row and deltas past the image are clipped, not written elsewhere.
        let overrun: [UInt8] = [9, 1, 0, 2, 200, 200, 0, 1]
        let clipped = try BMPDecoder().decode(
            FormatFixtures.bmp(Header(width: 2, height: 2, bitCount: 8, compression: 1, palette: Self.palette, colorsUsed: 4), pixelData: overrun),
            options: options)
        #expect(clipped.pixels == (clear + clear + green + green))
    }

    @Test("a target size scales the bitmap down; the pipeline's default decoders include BMP")
    func scaledAndPipeline() throws {
        let data = FormatFixtures.bmp(FormatFixtures.quadrants(width: 120, height: 60))
        let image = try BMPDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 30, height: 30), contentMode: .fit))
        #expect(image.size == ImageSize(width: 30, height: 15))
        #expect(FormatFixtures.showsQuadrants(image, tolerance: 0))
        #expect(ImageHeader(data).storedSize == ImageSize(width: 120, height: 60))
        #expect(ImageDecodingOptions().decodedBytesEstimate(of: data) == 120 * 60 * 4)
        let decoders = ImagePipeline.Configuration(trimsMemoryOnPressure: false).decoders
        #expect(FormatFixtures.showsQuadrants(try ImagePipeline.decode(data, options: options, decoders: decoders), tolerance: 0))
    }

    @Test("a tiny file declaring a huge bitmap is refused before allocating: over the limit, or with less data than it declares")
    func limits() throws {
        let huge = FormatFixtures.bmp(Header(width: 100_000, height: -100_000, bitCount: 24), pixelData: [1, 2, 3])
        #expect(huge.count < 100)
        let error = #expect(throws: ImageDecodingError.self) { try BMPDecoder().decode(huge, options: options) }
        #expect(error?.code == .tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000))
        // 9000x9000 is within the limit, but its 243 MB of pixels are not there.
        let short = FormatFixtures.bmp(Header(width: 9000, height: 9000, bitCount: 24), pixelData: [1, 2, 3])
        let truncated = #expect(throws: ImageDecodingError.self) { try BMPDecoder().decode(short, options: options) }
        #expect(truncated?.code == .corrupt)
        #expect(truncated?.detail == "truncated pixel data")
        #expect(ImageHeader(huge).storedSize == ImageSize(width: 100_000, height: 100_000))
    }

    @Test("damaged headers give a BMP error saying what is wrong")
    func damagedHeaders() throws {
        let pixels = FormatFixtures.bitmapRows([[1, 2]], bitCount: 24)
        let cases: [(Data, String)] = [
            (
                FormatFixtures.bmp(Header(size: 64, width: 2, height: 1, bitCount: 24), pixelData: pixels),
                "unsupported bitmap header size 64 (OS/2 2.x headers are not read)"
            ),
            (FormatFixtures.bmp(Header(width: 2, height: 1, bitCount: 3), pixelData: pixels), "unsupported bit count 3"),
            (
                FormatFixtures.bmp(Header(width: 2, height: 1, bitCount: 24, compression: 4), pixelData: pixels),
                "embedded JPEG bitmaps are not supported"
            ),
            (
                FormatFixtures.bmp(Header(width: 2, height: 1, bitCount: 24, compression: 3, masks: [1, 2, 4]), pixelData: pixels),
                "compression 3 with 24 bits per pixel"
            ),
            (
                FormatFixtures.bmp(Header(width: 2, height: 1, bitCount: 32, compression: 3, masks: [0xF0F, 0xF0, 0xF000]), pixelData: pixels),
                "a bit mask is not contiguous"
            ),
            (
                FormatFixtures.bmp(
                    Header(width: 2, height: -1, bitCount: 8, compression: 1, palette: Self.palette, colorsUsed: 4), pixelData: [0, 1]),
                "a run-length encoded bitmap cannot be top-down"
            ),
            (
                FormatFixtures.bmp(
                    Header(width: 2, height: 2, bitCount: 8, compression: 1, palette: Self.palette, colorsUsed: 4), pixelData: [2, 1, 0, 0]),
                "truncated run-length data"
            ),
            (FormatFixtures.bmp(Header(width: 0, height: 1, bitCount: 24), pixelData: pixels), "the header declares a width of 0"),
            (FormatFixtures.bmp(Header(width: 2, height: 0, bitCount: 24), pixelData: pixels), "the header declares a height of 0"),
            (Data("BM".utf8) + Data(repeating: 0, count: 10), "truncated file header"),
        ]
        for (data, detail) in cases {
            let error = #expect(throws: ImageDecodingError.self, "\(detail)") { try BMPDecoder().decode(data, options: options) }
            #expect(error?.format == .bmp)
            #expect(error?.code == .corrupt)
            #expect(error?.detail == detail)
        }
        // The pixel data offset past the end of the file.
        var pastEnd = FormatFixtures.bmp(Header(width: 2, height: 1, bitCount: 24), pixelData: pixels)
        pastEnd.replaceSubrange(10..<14, with: [0xFF, 0xFF, 0xFF, 0x7F])
        let offset = #expect(throws: ImageDecodingError.self) { try BMPDecoder().decode(pastEnd, options: options) }
        #expect(offset?.detail == "truncated pixel data")
        // The pixel data offset inside the header.
        var inside = pastEnd
        inside.replaceSubrange(10..<14, with: [40, 0, 0, 0])
        let header = #expect(throws: ImageDecodingError.self) { try BMPDecoder().decode(inside, options: options) }
        #expect(header?.detail == "the pixel data offset 40 is inside the headers")
    }

    @Test("truncated and bit-flipped BMPs give an image of the size they declare or a BMP error, never a crash")
    func damagedInput() throws {
        let sources = [
            FormatFixtures.bmp(CodecTests.gradient(width: 23, height: 11, format: .rgba8)),
            FormatFixtures.bmp(
                Header(size: 124, width: 13, height: 9, bitCount: 4, palette: Self.palette, colorsUsed: 4),
                pixelData: FormatFixtures.bitmapRows(Self.indices(width: 13, height: 9), bitCount: 4)),
            FormatFixtures.bmp(
                Header(width: 6, height: 3, bitCount: 8, compression: 1, palette: Self.palette, colorsUsed: 4),
                pixelData: [3, 1, 0, 3, 2, 3, 0, 0, 0, 0, 0, 2, 2, 1, 2, 2, 0, 1]),
        ]
        var generator = SeededGenerator(seed: 23)
        var decoded = 0
        var rejected = 0
        for source in sources {
            var variants = (0..<source.count).map { Data(source.prefix($0)) }
            for _ in 0..<300 {
                var copy = source
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    copy[Int.random(in: 2..<copy.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                }
                variants.append(copy)
            }
            for variant in variants {
                do {
                    let image = try BMPDecoder().decode(variant, options: ImageDecodingOptions(maximumPixelCount: 1_000_000))
                    #expect(image.pixels.count == image.bytesPerRow * image.height)
                    decoded += 1
                } catch {
                    #expect(error.format == .bmp)
                    rejected += 1
                }
            }
            // (The last row's padding may be missing: two bytes less cut into the pixels.)
            #expect(throws: ImageDecodingError.self) { try BMPDecoder().decode(source.prefix(source.count - 2), options: options) }
        }
        #expect(decoded > 0 && rejected > 0, "\(decoded) decoded, \(rejected) rejected")
    }
}
