import CTiff
import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("TIFF: libtiff's compressions, depths, palettes, planes, tiles, alpha, orientation, pages, limits, damaged input")
struct TIFFDecoderTests {
    typealias Page = FormatFixtures.TIFFPage
    let options = ImageDecodingOptions()

    static let lossless: [(String, Int32)] = [
        ("none", COMPRESSION_NONE), ("LZW", COMPRESSION_LZW), ("Deflate", COMPRESSION_ADOBE_DEFLATE), ("PackBits", COMPRESSION_PACKBITS),
    ]

    /// Rows of `bits`-bit values packed from the most significant bit, each
    /// padded to a whole byte, as TIFF stores samples under 8 bits.
    static func packed(_ rows: [[Int]], bits: Int) -> [UInt8] {
        rows.flatMap { row -> [UInt8] in
            var bytes = [UInt8](repeating: 0, count: (row.count * bits + 7) / 8)
            for (x, value) in row.enumerated() { bytes[x * bits / 8] |= UInt8(value << (8 - bits - x * bits % 8)) }
            return bytes
        }
    }

    /// Samples of `image` at 16 bits (each 8-bit value times 257), native-endian.
    static func sixteenBit(_ image: Image) -> [UInt8] {
        image.pixels.flatMap { value -> [UInt8] in withUnsafeBytes(of: UInt16(value) * 257) { Array($0) } }
    }

    @Test("8-bit gray, gray and alpha, RGB and RGBA decode exactly, uncompressed or LZW, Deflate, PackBits, with and without a predictor")
    func losslessCompressions() throws {
        for format in [Image.PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8] {
            let image = CodecTests.gradient(width: 61, height: 37, format: format)
            for (name, compression) in Self.lossless {
                for predictor in compression == COMPRESSION_LZW || compression == COMPRESSION_ADOBE_DEFLATE ? [nil, PREDICTOR_HORIZONTAL] : [nil] {
                    var page = Page(image)
                    page.compression = compression
                    page.predictor = predictor
                    page.rowsPerStrip = 8
                    let data = try FormatFixtures.tiff([page])
                    #expect(ImageFormat(sniffing: data) == .tiff)
                    let decoded = try TIFFDecoder().decode(data, options: options)
                    #expect(decoded == image, "\(format) \(name) predictor \(predictor.map(String.init) ?? "none")")
                }
            }
        }
    }

    @Test("JPEG-compressed pages decode close to their source", .enabled(if: TIFFIsCODECConfigured(UInt16(COMPRESSION_JPEG)) == 1))
    func jpegCompression() throws {
        for format in [Image.PixelFormat.gray8, .rgb8] {
            let image = CodecTests.gradient(width: 64, height: 48, format: format)
            var page = Page(image)
            page.compression = COMPRESSION_JPEG
            page.rowsPerStrip = 16
            let decoded = try TIFFDecoder().decode(try FormatFixtures.tiff([page]), options: options)
            #expect(decoded.pixelFormat == format)
            #expect(CodecTests.meanAbsoluteError(decoded, image) < 2.5, "\(format)")
        }
    }

    @Test("16-bit samples are reduced to 8 bits, gray and colour, little- and big-endian files")
    func sixteenBit() throws {
        for format in [Image.PixelFormat.gray8, .rgb8, .rgba8] {
            let image = CodecTests.gradient(width: 33, height: 21, format: format)
            var page = Page(image)
            page.bitsPerSample = 16
            page.samples = Self.sixteenBit(image)
            page.compression = COMPRESSION_LZW
            for bigEndian in [false, true] {
                let decoded = try TIFFDecoder().decode(try FormatFixtures.tiff([page], bigEndian: bigEndian), options: options)
                #expect(decoded == image, "\(format) big-endian: \(bigEndian)")
            }
        }
    }

    @Test("palette pages of 1, 4 and 8 bits give their colours as RGB")
    func palettes() throws {
        let colors: [[UInt8]] = [[255, 0, 0], [0, 200, 0], [10, 20, 250], [255, 255, 255]]
        for bits in [1, 4, 8] {
            let (width, height) = (13, 7)
            let entries = 1 << bits
            // Each channel's entries in turn, 16 bits each: index i is colours[i % 4].
            let colormap = (0..<3).flatMap { channel in (0..<entries).map { UInt16(colors[$0 % colors.count][channel]) * 257 } }
            let indices = (0..<height).map { y in (0..<width).map { x in (x + y) % min(entries, colors.count) } }
            let samples = Self.packed(indices, bits: bits)
            var page = Page(width: width, height: height, samples: samples, bitsPerSample: bits, samplesPerPixel: 1, photometric: PHOTOMETRIC_PALETTE)
            page.colormap = colormap
            page.compression = COMPRESSION_PACKBITS
            let image = try TIFFDecoder().decode(try FormatFixtures.tiff([page]), options: options)
            #expect(image.pixelFormat == .rgb8, "\(bits) bits")
            for y in 0..<height {
                for x in 0..<width {
                    #expect(FormatFixtures.rgba(image, x: x, y: y) == colors[indices[y][x]] + [255], "\(bits) bits (\(x), \(y))")
                }
            }
        }
    }

    @Test("bilevel pages: 1-bit min-is-black and min-is-white give black and white gray")
    func bilevel() throws {
        let (width, height) = (19, 5)
        let bits = (0..<height).map { y in (0..<width).map { x in (x * y) % 3 == 0 ? 1 : 0 } }
        let samples = Self.packed(bits, bits: 1)
        for photometric in [PHOTOMETRIC_MINISBLACK, PHOTOMETRIC_MINISWHITE] {
            var page = Page(width: width, height: height, samples: samples, bitsPerSample: 1, samplesPerPixel: 1, photometric: photometric)
            page.compression = COMPRESSION_CCITTFAX4
            let image = try TIFFDecoder().decode(try FormatFixtures.tiff([page]), options: options)
            #expect(image.pixelFormat == .gray8)
            let expected = bits.flatMap { $0.map { bit in UInt8((bit == 1) == (photometric == PHOTOMETRIC_MINISBLACK) ? 255 : 0) } }
            #expect(image.pixels == expected, "photometric \(photometric)")
        }
    }

    @Test("separate planes and tiles decode like contiguous strips")
    func planesAndTiles() throws {
        for format in [Image.PixelFormat.rgb8, .rgba8] {
            let image = CodecTests.gradient(width: 45, height: 38, format: format)
            var planar = Page(image)
            planar.separatePlanes = true
            planar.compression = COMPRESSION_ADOBE_DEFLATE
            #expect(try TIFFDecoder().decode(try FormatFixtures.tiff([planar]), options: options) == image, "\(format) planes")
            var tiled = Page(image)
            tiled.tileSize = 16
            tiled.compression = COMPRESSION_LZW
            #expect(try TIFFDecoder().decode(try FormatFixtures.tiff([tiled]), options: options) == image, "\(format) tiles")
        }
    }

    @Test("unassociated alpha comes out as stored; associated alpha is divided out")
    func alpha() throws {
        // Every colour value against every alpha step of 15.
        let width = 256
        let height = 18
        var pixels = [UInt8]()
        for y in 0..<height {
            for x in 0..<width { pixels += [UInt8(x), UInt8(255 - x), UInt8(x / 2), UInt8(y * 15)] }
        }
        let image = try #require(Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels))
        let straight = try TIFFDecoder().decode(try FormatFixtures.tiff([Page(image)]), options: options)
        #expect(straight == image)
        let associated = try TIFFDecoder().decode(try FormatFixtures.tiff([Page(image, associatedAlpha: true)]), options: options)
        #expect(associated.pixelFormat == .rgba8)
        for index in stride(from: 0, to: pixels.count, by: 4) {
            let alpha = Int(pixels[index + 3])
            #expect(Int(associated.pixels[index + 3]) == alpha)
            for channel in 0..<3 {
                let value = Int(associated.pixels[index + channel])
                // Premultiplying keeps about alpha levels of each channel: the error is at most 255 / alpha.
                let tolerance = alpha == 0 ? 0 : (255 + alpha - 1) / alpha
                #expect(abs(value - (alpha == 0 ? 0 : Int(pixels[index + channel]))) <= tolerance, "pixel \(index / 4), alpha \(alpha)")
            }
        }
    }

    @Test("the orientation tag is applied, all eight of them, and a target size to the upright image", arguments: 1...8)
    func orientation(_ value: Int) throws {
        let stored = CodecTests.gradient(width: 24, height: 10, format: .rgb8)
        var page = Page(stored)
        page.orientation = value
        let data = try FormatFixtures.tiff([page])
        let orientation = try #require(ImageOrientation(rawValue: value))
        #expect(try TIFFDecoder().decode(data, options: options) == orientation.apply(to: stored))
        #expect(ImageHeader(data).orientation == orientation)
        #expect(ImageHeader(data).uprightSize == (orientation.swapsDimensions ? ImageSize(width: 10, height: 24) : ImageSize(width: 24, height: 10)))
        let small = try TIFFDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 5, height: 5), contentMode: .fit))
        #expect(small.size == (orientation.swapsDimensions ? ImageSize(width: 2, height: 5) : ImageSize(width: 5, height: 2)))
    }

    @Test("a page is picked by the page option; a missing page, a negative one or one past the frame limit is a typed error")
    func pages() throws {
        let images = [
            FormatFixtures.quadrants(width: 20, height: 10), CodecTests.gradient(width: 7, height: 9, format: .gray8),
            FormatFixtures.quadrants(width: 8, height: 8, alpha: true),
        ]
        let data = try FormatFixtures.tiff(images.map { Page($0) })
        for (index, image) in images.enumerated() {
            var options = options
            options.page = index
            #expect(try TIFFDecoder().decode(data, options: options) == image, "page \(index)")
        }
        #expect(try TIFFDecoder().decode(data, options: options) == images[0])
        let missing = #expect(throws: ImageDecodingError.self) { try TIFFDecoder().decode(data, options: ImageDecodingOptions(page: 3)) }
        #expect(missing?.code == .noSuchPage(page: 3))
        #expect(missing?.description == "TIFF has no page 3: the file has 3 pages")
        let negative = #expect(throws: ImageDecodingError.self) { try TIFFDecoder().decode(data, options: ImageDecodingOptions(page: -1)) }
        #expect(negative?.code == .noSuchPage(page: -1))
        let pastLimit = #expect(throws: ImageDecodingError.self) {
            try TIFFDecoder().decode(data, options: ImageDecodingOptions(maximumFrameCount: 2, page: 2))
        }
        #expect(pastLimit?.code == .tooManyFrames(count: 3, limit: 2))
        // Only the first page is read for the header.
        #expect(ImageHeader(data).storedSize == ImageSize(width: 20, height: 10))
    }

    @Test("CMYK pages are converted to RGB")
    func cmyk() throws {
        // White (no ink), cyan, black.
        let samples: [UInt8] = [0, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 255]
        let page = Page(width: 3, height: 1, samples: samples, samplesPerPixel: 4, photometric: PHOTOMETRIC_SEPARATED)
        let image = try TIFFDecoder().decode(try FormatFixtures.tiff([page]), options: options)
        #expect(image.pixelFormat == .rgb8)
        #expect(image.pixels == [255, 255, 255, 0, 255, 255, 0, 0, 0])
    }

    @Test("a target size scales the page down")
    func scaled() throws {
        let data = try FormatFixtures.tiff([Page(FormatFixtures.quadrants(width: 200, height: 100))])
        let image = try TIFFDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 50, height: 50), contentMode: .fit))
        #expect(image.size == ImageSize(width: 50, height: 25))
        #expect(FormatFixtures.showsQuadrants(image, tolerance: 0))
    }

    @Test(
        "a tiny file declaring 100000x100000 pixels, or strips it does not have, is refused before anything is allocated; so is a real page over the limit"
    )
    func pixelLimit() throws {
        let tiny = FormatFixtures.handMadeTIFF(width: 100_000, height: 100_000, pixels: [1, 2, 3])
        #expect(tiny.count < 200)
        #expect(ImageHeader(tiny).storedSize == ImageSize(width: 100_000, height: 100_000))
        let error = #expect(throws: ImageDecodingError.self) { try TIFFDecoder().decode(tiny, options: options) }
        #expect(error?.code == .tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000))
        // Within the limit, but its strip of 75 MB is not there: refused before the pixels are allocated.
        let short = FormatFixtures.handMadeTIFF(width: 5000, height: 5000, pixels: [1, 2, 3], fields: [.long(279, 75_000_000)])
        let missing = #expect(throws: ImageDecodingError.self) { try TIFFDecoder().decode(short, options: options) }
        #expect(missing?.detail == "strip or tile 0 lies past the end of the data")
        // A 2x2 page in one tile of 8192x8192 RGB pixels: 192 MiB for libtiff to allocate.
        let hugeTile = FormatFixtures.handMadeTIFF(
            width: 2, height: 2, pixels: [UInt8](repeating: 5, count: 12),
            fields: [.long(322, 8192), .long(323, 8192), .long(324, 8), .long(325, 12)])
        let tile = #expect(throws: ImageDecodingError.self) { try TIFFDecoder().decode(hugeTile, options: options) }
        #expect(tile?.detail == "a strip or tile of 201326592 bytes for a page of 2x2 pixels")
        let real = try FormatFixtures.tiff([Page(FormatFixtures.quadrants(width: 640, height: 480))])
        let refused = #expect(throws: ImageDecodingError.self) {
            try TIFFDecoder().decode(real, options: ImageDecodingOptions(maximumPixelCount: 300_000))
        }
        #expect(refused?.code == .tooManyPixels(width: 640, height: 480, limit: 300_000))
    }

    @Test("truncated files, offsets past the end and bit flips give an image or a TIFF error naming what failed, and libtiff prints nothing")
    func damagedInput() throws {
        let original = try FormatFixtures.tiff([Page(CodecTests.gradient(width: 40, height: 30, format: .rgba8))])
        // The strips come first, the directory last: cutting anywhere loses the directory or pixels.
        for length in stride(from: 0, to: original.count, by: max(1, original.count / 50)) {
            let error = #expect(throws: ImageDecodingError.self, "\(length) bytes") {
                try TIFFDecoder().decode(original.prefix(length), options: options)
            }
            #expect(error?.format == .tiff)
            #expect(error.map { $0.code == .corrupt && !$0.detail.isEmpty } ?? false, "\(length) bytes: \(String(describing: error))")
        }
        // A strip that starts past the end of the file.
        let pastEnd = FormatFixtures.handMadeTIFF(width: 2, height: 2, pixels: [UInt8](repeating: 9, count: 12), fields: [.long(273, 1_000_000)])
        let strip = #expect(throws: ImageDecodingError.self) { try TIFFDecoder().decode(pastEnd, options: options) }
        #expect(strip?.code == .corrupt)
        #expect(strip?.detail.contains("strip") == true, "\(String(describing: strip))")
        // A first directory past the end.
        var directoryPastEnd = original
        directoryPastEnd.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0x00])
        let directory = #expect(throws: ImageDecodingError.self) { try TIFFDecoder().decode(directoryPastEnd, options: options) }
        #expect(directory?.code == .corrupt)
        #expect(directory?.detail.isEmpty == false)

        var generator = SeededGenerator(seed: 17)
        var decoded = 0
        var rejected = 0
        for _ in 0..<400 {
            var damaged = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                damaged[Int.random(in: 4..<damaged.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            }
            do {
                let image = try TIFFDecoder().decode(damaged, options: options)
                #expect(image.pixels.count == image.bytesPerRow * image.height)
                decoded += 1
            } catch {
                #expect(error.format == .tiff)
                rejected += 1
            }
        }
        #expect(decoded > 0 && rejected > 0, "\(decoded) decoded, \(rejected) rejected")
        // libtiff's process-wide handlers, which print to stderr, are off.
        #expect(TIFFSetErrorHandler(nil) == nil)
        #expect(TIFFSetWarningHandler(nil) == nil)
    }

    @Test("the header gives the first page's size, the estimate its pixels; the pipeline's default decoders include TIFF")
    func headerAndPipeline() throws {
        let data = try FormatFixtures.tiff([Page(FormatFixtures.quadrants(width: 30, height: 20)), Page(FormatFixtures.quadrants())])
        #expect(ImageHeader(data).storedSize == ImageSize(width: 30, height: 20))
        #expect(ImageDecodingOptions().decodedBytesEstimate(of: data) == 30 * 20 * 4)
        #expect(
            ImageHeader(try FormatFixtures.tiff([Page(FormatFixtures.quadrants())], bigEndian: true)).storedSize == ImageSize(width: 64, height: 48))
        let decoders = ImagePipeline.Configuration(trimsMemoryOnPressure: false).decoders
        let image = try ImagePipeline.decode(data, options: options, decoders: decoders)
        #expect(FormatFixtures.showsQuadrants(image, tolerance: 0))
    }
}
