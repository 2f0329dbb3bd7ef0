import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("ICO and CUR: sniffing, bitmap and PNG entries, masks, choosing an entry, limits, damaged input")
struct ICODecoderTests {
    typealias Entry = (image: FormatFixtures.IconImage, width: Int, height: Int, bitCount: Int)
    let options = ImageDecodingOptions()

    /// A flat image of `color` (RGB) at `size`.
    static func flat(_ size: Int, _ color: [UInt8], height: Int? = nil) -> Image {
        Image(
            width: size, height: height ?? size, pixelFormat: .rgb8,
            pixels: Array([[UInt8]](repeating: color, count: size * (height ?? size)).joined()))!
    }

    static func entry(_ image: FormatFixtures.IconImage, _ size: Int, _ bitCount: Int = 32) -> Entry {
        (image, size >= 256 ? 0 : size, size >= 256 ? 0 : size, bitCount)
    }

    @Test("ICO and CUR are sniffed from a plausible directory, not from the signature alone; ICO's media type is image/x-icon")
    func sniffing() throws {
        let icon = FormatFixtures.ico([Self.entry(FormatFixtures.iconBitmap(Self.flat(4, [1, 2, 3])), 4, 24)])
        #expect(ImageFormat(sniffing: icon) == .ico)
        let cursor = FormatFixtures.ico([Self.entry(FormatFixtures.iconBitmap(Self.flat(4, [1, 2, 3])), 4, 24)], cursor: true)
        #expect(ImageFormat(sniffing: cursor) == .ico)
        #expect(ImageFormat.ico.mediaType == "image/x-icon")
        #expect(ImageFormat.ico.fileExtension == "ico")
        #expect(ImageFormat(mediaType: "image/x-icon") == .ico)
        #expect(ImageFormat(mediaType: "image/tiff") == .tiff)
        #expect(ImageFormat(mediaType: "application/octet-stream") == nil)
        // No entries; an icon's entry with 7 planes; an entry whose data starts inside the directory; too short to tell.
        var noEntries = icon
        noEntries[4] = 0
        var planes = icon
        planes[10] = 7
        var inside = icon
        inside.replaceSubrange(18..<22, with: [10, 0, 0, 0])
        for data in [noEntries, planes, inside, icon.prefix(21), Data([0, 0, 1, 0, 1, 0])] {
            #expect(ImageFormat(sniffing: data) == .unknown)
        }
        // Random data after the signature: an icon's entry is rarely plausible.
        var generator = SeededGenerator(seed: 5)
        var taken = 0
        for _ in 0..<2_000 {
            let data = Data([0, 0, 1, 0] + (0..<28).map { _ in UInt8.random(in: 0...255, using: &generator) })
            if ImageFormat(sniffing: data) == .ico { taken += 1 }
        }
        #expect(taken < 10, "\(taken) of 2000")
    }

    @Test("bitmap entries: 32-bit alpha, 24-bit and 8-bit with the mask, a 32-bit icon whose alpha is all zero uses its mask")
    func bitmaps() throws {
        let rgba = CodecTests.gradient(width: 16, height: 16, format: .rgba8)
        let withAlpha = FormatFixtures.ico([Self.entry(FormatFixtures.iconBitmap(rgba), 16)])
        #expect(try ICODecoder().decode(withAlpha, options: options) == rgba)

        let rgb = CodecTests.gradient(width: 13, height: 7, format: .rgb8)
        let corner = { (x: Int, y: Int) in x < 3 && y < 2 }
        let masked = FormatFixtures.ico([Self.entry(FormatFixtures.iconBitmap(rgb, transparent: corner), 13, 24)])
        let image = try ICODecoder().decode(masked, options: options)
        #expect(image.pixelFormat == .rgba8)
        for y in 0..<7 {
            for x in 0..<13 {
                let expected = corner(x, y) ? 0 : 255
                #expect(FormatFixtures.rgba(image, x: x, y: y)[3] == UInt8(expected), "(\(x), \(y))")
                #expect(Array(FormatFixtures.rgba(image, x: x, y: y).prefix(3)) == Array(FormatFixtures.rgba(rgb, x: x, y: y).prefix(3)))
            }
        }
        // No mask bit set: opaque RGB.
        #expect(try ICODecoder().decode(FormatFixtures.ico([Self.entry(FormatFixtures.iconBitmap(rgb), 13, 24)]), options: options) == rgb)

        // 32 bits with alpha zero everywhere: the mask decides.
        let zeroAlpha = try #require(
            Image(
                width: 13, height: 7, pixelFormat: .rgba8, pixels: rgb.addingAlpha().pixels.enumerated().map { $0.offset % 4 == 3 ? 0 : $0.element }))
        let old = try ICODecoder().decode(
            FormatFixtures.ico([Self.entry(FormatFixtures.iconBitmap(zeroAlpha, transparent: corner), 13)]), options: options)
        #expect(old == image)

        // 8-bit palette entry with its mask.
        let palette: [[UInt8]] = [[255, 0, 0], [0, 0, 255]]
        let indices = (0..<4).map { y in (0..<5).map { x in (x + y) % 2 } }
        let mask = (0..<4).map { y in (0..<5).map { x in x == 4 && y == 0 ? 1 : 0 } }
        let header = FormatFixtures.BitmapHeader(width: 5, height: 4, bitCount: 8, palette: palette, colorsUsed: 2)
        let paletted = FormatFixtures.IconImage.bitmap(
            header, pixelData: FormatFixtures.bitmapRows(indices.reversed(), bitCount: 8),
            maskData: FormatFixtures.bitmapRows(mask.reversed(), bitCount: 1))
        let decoded = try ICODecoder().decode(FormatFixtures.ico([Self.entry(paletted, 5, 8)]), options: options)
        #expect(FormatFixtures.rgba(decoded, x: 0, y: 0) == [255, 0, 0, 255])
        #expect(FormatFixtures.rgba(decoded, x: 1, y: 0) == [0, 0, 255, 255])
        #expect(FormatFixtures.rgba(decoded, x: 4, y: 0) == [255, 0, 0, 0])
        #expect(FormatFixtures.rgba(decoded, x: 4, y: 1) == [0, 0, 255, 255])
    }

    @Test("PNG entries decode with the PNG decoder; cursors like icons")
    func pngEntries() throws {
        let image = CodecTests.gradient(width: 40, height: 30, format: .rgba8)
        let data = FormatFixtures.ico([Self.entry(.png(try PNGEncoder().encode(image)), 40)])
        #expect(try ICODecoder().decode(data, options: options) == image)
        let cursor = FormatFixtures.ico([Self.entry(.png(try PNGEncoder().encode(image)), 40)], cursor: true)
        #expect(try ICODecoder().decode(cursor, options: options) == image)
    }

    @Test(
        "the entry that best covers the target: the smallest at least as large, else the largest; the deepest at a tie; the largest without a target")
    func choosingAnEntry() throws {
        // Each size its own colour; the PNG is 300x300 although the directory says 256.
        let red = Self.flat(16, [255, 0, 0])
        let green = Self.flat(32, [0, 255, 0])
        let blue = Self.flat(48, [0, 0, 255])
        let large = Self.flat(300, [9, 9, 9])
        let shallowGreen = Self.flat(32, [0, 100, 0])
        let data = FormatFixtures.ico([
            Self.entry(FormatFixtures.iconBitmap(red), 16, 24), Self.entry(FormatFixtures.iconBitmap(shallowGreen, bitCount: 24), 32, 24),
            Self.entry(FormatFixtures.iconBitmap(blue), 48, 24), Self.entry(.png(try PNGEncoder().encode(large)), 256),
            Self.entry(FormatFixtures.iconBitmap(green.addingAlpha()), 32, 32),
        ])
        func picked(_ target: ImageSize?, _ mode: ContentMode = .fill) throws -> (ImageSize, [UInt8]) {
            let image = try ICODecoder().decode(data, options: ImageDecodingOptions(targetSize: target, contentMode: mode))
            return (image.size, Array(FormatFixtures.rgba(image, x: 0, y: 0).prefix(3)))
        }
        #expect(try picked(nil) == (ImageSize(width: 300, height: 300), [9, 9, 9]))
        #expect(try picked(ImageSize(width: 16, height: 16)) == (ImageSize(width: 16, height: 16), [255, 0, 0]))
        #expect(try picked(ImageSize(width: 10, height: 10)) == (ImageSize(width: 10, height: 10), [255, 0, 0]))
        // 20x20: the 32x32 entries cover it; the 32-bit one is deeper than the 24-bit one. Scaled to the target.
        #expect(try picked(ImageSize(width: 20, height: 20)) == (ImageSize(width: 20, height: 20), [0, 255, 0]))
        #expect(try picked(ImageSize(width: 40, height: 40)) == (ImageSize(width: 40, height: 40), [0, 0, 255]))
        // Fill needs both sides covered; fit one of them.
        #expect(try picked(ImageSize(width: 20, height: 60)).1 == [9, 9, 9])
        #expect(try picked(ImageSize(width: 20, height: 60), .fit).1 == [0, 255, 0])
        #expect(try picked(ImageSize(width: 1000, height: 1000)) == (ImageSize(width: 300, height: 300), [9, 9, 9]))
        // The header and the estimate give the largest image's own size.
        #expect(ImageHeader(data).storedSize == ImageSize(width: 300, height: 300))
        #expect(ImageDecodingOptions().decodedBytesEstimate(of: data) == 300 * 300 * 4)
        let decoders = ImagePipeline.Configuration(trimsMemoryOnPressure: false).decoders
        #expect(try ImagePipeline.decode(data, options: options, decoders: decoders).size == ImageSize(width: 300, height: 300))
    }

    @Test("entries over the pixel limit are passed over; a file with only such entries is refused before allocating")
    func limits() throws {
        // A bitmap header declaring 50000x50000 (doubled height), with no pixels behind it.
        let huge = FormatFixtures.IconImage.bitmap(
            FormatFixtures.BitmapHeader(width: 50_000, height: 50_000, bitCount: 32), pixelData: [], maskData: [])
        let small = FormatFixtures.iconBitmap(Self.flat(8, [1, 2, 3]))
        let mixed = FormatFixtures.ico([Self.entry(huge, 0), Self.entry(small, 8, 24)])
        #expect(try ICODecoder().decode(mixed, options: options).size == ImageSize(width: 8, height: 8))
        let alone = FormatFixtures.ico([Self.entry(huge, 0)])
        #expect(alone.count < 100)
        let error = #expect(throws: ImageDecodingError.self) { try ICODecoder().decode(alone, options: options) }
        #expect(error?.code == .tooManyPixels(width: 50_000, height: 50_000, limit: 100_000_000))
        #expect(error?.format == .ico)
    }

    @Test("damaged icons give an ICO error saying what failed")
    func damagedIcons() throws {
        let good = FormatFixtures.ico([Self.entry(FormatFixtures.iconBitmap(Self.flat(8, [1, 2, 3])), 8, 24)])
        var pastEnd = good
        pastEnd.replaceSubrange(18..<22, with: [0, 0, 1, 0])
        var tooLong = good
        tooLong.replaceSubrange(14..<18, with: [0, 0, 1, 0])
        let noMask = FormatFixtures.ico([
            Self.entry(
                .bitmap(
                    FormatFixtures.BitmapHeader(width: 8, height: 8, bitCount: 24), pixelData: [UInt8](repeating: 7, count: 8 * 24), maskData: []), 8,
                24)
        ])
        let rle = FormatFixtures.ico([
            Self.entry(
                .bitmap(
                    FormatFixtures.BitmapHeader(width: 2, height: 1, bitCount: 8, compression: 1, palette: [[1, 2, 3]], colorsUsed: 1),
                    pixelData: [2, 0, 0, 1], maskData: []), 2, 8)
        ])
        let badPNG = FormatFixtures.ico([Self.entry(.png(try PNGEncoder().encode(Self.flat(8, [1, 2, 3])).prefix(40)), 8)])
        let cases: [(Data, String)] = [
            (good.prefix(20), "truncated directory (1 entries declared)"),
            (pastEnd, "no entry of the 1 has its data inside the file"),
            (tooLong, "no entry of the 1 has its data inside the file"),
            (noMask, "truncated transparency mask"),
            (rle, "run-length encoded icon bitmaps are not supported"),
            (badPNG, "entry 0 (PNG): "),
            (
                FormatFixtures.ico([
                    Self.entry(.bitmap(FormatFixtures.BitmapHeader(width: 2, height: 1, bitCount: 3), pixelData: [], maskData: []), 2, 3)
                ]), "unsupported bit count 3"
            ),
        ]
        for (data, detail) in cases {
            let error = #expect(throws: ImageDecodingError.self, "\(detail)") { try ICODecoder().decode(data, options: options) }
            #expect(error?.format == .ico)
            #expect(error?.detail.hasPrefix(detail) == true, "\(String(describing: error))")
        }
    }

    @Test("truncated and bit-flipped icons give an image or an ICO error, never a crash")
    func damagedInput() throws {
        let source = FormatFixtures.ico([
            Self.entry(FormatFixtures.iconBitmap(CodecTests.gradient(width: 16, height: 16, format: .rgb8), transparent: { x, _ in x == 0 }), 16, 24),
            Self.entry(.png(try PNGEncoder().encode(CodecTests.gradient(width: 24, height: 24, format: .rgba8))), 24),
            Self.entry(FormatFixtures.iconBitmap(CodecTests.gradient(width: 32, height: 32, format: .rgba8)), 32),
        ])
        var generator = SeededGenerator(seed: 29)
        var variants = stride(from: 0, to: source.count, by: 7).map { Data(source.prefix($0)) }
        for _ in 0..<600 {
            var copy = source
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                copy[Int.random(in: 4..<copy.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            }
            variants.append(copy)
        }
        var decoded = 0
        var rejected = 0
        for variant in variants {
            for target in [nil, ImageSize(width: 20, height: 20)] {
                do {
                    let image = try ICODecoder().decode(variant, options: ImageDecodingOptions(targetSize: target, maximumPixelCount: 1_000_000))
                    #expect(image.pixels.count == image.bytesPerRow * image.height)
                    decoded += 1
                } catch {
                    #expect(error.format == .ico)
                    rejected += 1
                }
            }
        }
        #expect(decoded > 0 && rejected > 0, "\(decoded) decoded, \(rejected) rejected")
    }
}
