import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("AVIF and HEIC: stills, alpha, sequences, limits, damaged input")
struct AVIFAndHEIFDecoderTests {
    let options = ImageDecodingOptions()

    @Test("AVIF stills decode close to what was encoded, with and without alpha")
    func avifStills() throws {
        for alpha in [false, true] {
            let data = try FormatFixtures.avif([FormatFixtures.quadrants(alpha: alpha)])
            #expect(ImageFormat(sniffing: data) == .avif)
            let image = try AVIFDecoder().decode(data, options: options)
            #expect(image.size == ImageSize(width: 64, height: 48))
            #expect(image.pixelFormat == (alpha ? .rgba8 : .rgb8))
            #expect(FormatFixtures.showsQuadrants(image, alpha: alpha), "alpha: \(alpha)")
            #expect(image.animation == nil)
        }
    }

    @Test("AVIFEncoder round trips: colour, alpha and gray come back close")
    func avifEncoder() throws {
        for image in [FormatFixtures.quadrants(), FormatFixtures.quadrants(alpha: true)] {
            let data = try AVIFEncoder(quality: 80).encode(image)
            #expect(ImageFormat(sniffing: data) == .avif)
            let decoded = try AVIFDecoder().decode(data, options: options)
            #expect(decoded.size == image.size && decoded.pixelFormat == image.pixelFormat)
            #expect(FormatFixtures.showsQuadrants(decoded, alpha: image.pixelFormat.hasAlpha, tolerance: 24))
        }
        let gray = Image(width: 32, height: 16, pixelFormat: .gray8, pixels: (0..<512).map { UInt8($0 % 32 * 8) })!
        let decoded = try AVIFDecoder().decode(try AVIFEncoder(quality: 90).encode(gray), options: options)
        #expect(decoded.size == gray.size)
        // Lower quality makes smaller files.
        let photo = FormatFixtures.quadrants(width: 128, height: 96)
        #expect(try AVIFEncoder(quality: 20).encode(photo).count < AVIFEncoder(quality: 95).encode(photo).count)
    }

    @Test("AVIF rotation (irot) and mirroring (imir) are applied, in that order")
    func avifTransforms() throws {
        // Red top-left, green top-right, blue bottom-left, white bottom-right; corners read clockwise from top-left.
        let (red, green, blue, white): ([UInt8], [UInt8], [UInt8], [UInt8]) = ([255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255])
        let cases: [(UInt8, UInt8?, ImageSize, [[UInt8]])] = [
            (1, nil, ImageSize(width: 48, height: 64), [green, white, blue, red]),  // a quarter turn anti-clockwise
            (2, nil, ImageSize(width: 64, height: 48), [white, blue, red, green]),
            (0, 1, ImageSize(width: 64, height: 48), [green, red, blue, white]),  // left and right exchanged
            (1, 0, ImageSize(width: 48, height: 64), [red, blue, white, green]),  // turned, then top and bottom exchanged
        ]
        for (turns, mirror, size, corners) in cases {
            let data = try FormatFixtures.avif([FormatFixtures.quadrants()], quarterTurns: turns, mirrorMode: mirror)
            let image = try AVIFDecoder().decode(data, options: options)
            #expect(image.size == size, "turns \(turns), mirror \(String(describing: mirror))")
            #expect(ImageHeader(data).uprightSize == size, "the header: turns \(turns), mirror \(String(describing: mirror))")
            #expect(ImageHeader(data).frameCount == 1)
            let points = [(4, 4), (size.width - 5, 4), (size.width - 5, size.height - 5), (4, size.height - 5)]
            let seen = points.map { point in FormatFixtures.rgba(image, x: point.0, y: point.1).prefix(3).map { $0 > 128 ? UInt8(255) : 0 } }
            #expect(seen == corners, "turns \(turns), mirror \(String(describing: mirror))")
        }
    }

    @Test("an AVIF sequence decodes frame by frame with its durations")
    func avifSequence() throws {
        let colors: [UInt8] = [200, 40, 120]
        let frames = colors.map { value in Image(width: 32, height: 32, pixelFormat: .rgb8, pixels: [UInt8](repeating: value, count: 32 * 32 * 3))! }
        let data = try FormatFixtures.avif(frames, durationSeconds: 0.25)
        let image = try AVIFDecoder().decode(data, options: options)
        let animation = try #require(image.animation)
        #expect(animation.frameCount == 3)
        #expect(animation.frameDurations == [0.25, 0.25, 0.25])
        let pass = try animation.frames()
        var index = 0
        while let frame = try pass.next() {
            #expect(abs(Int(frame.pixels[0]) - Int(colors[index])) <= 6, "frame \(index)")
            index += 1
        }
        #expect(index == 3)
        let limited = #expect(throws: ImageDecodingError.self) {
            try AVIFDecoder().decode(data, options: ImageDecodingOptions(maximumFrameCount: 2))
        }
        #expect(limited?.code == .tooManyFrames(count: 3, limit: 2))
        // The header counts the images without decoding them, as for GIF and WebP.
        #expect(ImageHeader(data).frameCount == 3)
        #expect(ImageHeader(data).storedSize == ImageSize(width: 32, height: 32))
        #expect(ImageHeader(data.prefix(40)).frameCount == nil)
    }

    @Test("HEIC decodes close to what was encoded, scaled to a target size by the pipeline's resampling")
    func heic() throws {
        let directory = TemporaryDirectory()
        let data = try FormatFixtures.heic(FormatFixtures.quadrants(width: 128, height: 96), directory: URL(fileURLWithPath: directory.path))
        #expect(ImageFormat(sniffing: data) == .heic)
        let image = try HEIFDecoder().decode(data, options: options)
        #expect(image.size == ImageSize(width: 128, height: 96))
        #expect(FormatFixtures.showsQuadrants(image, tolerance: 16))
        let scaled = try ImagePipeline.decode(
            data, options: ImageDecodingOptions(targetSize: ImageSize(width: 32, height: 32), contentMode: .fit), decoders: [HEIFDecoder()]
        )
        #expect(scaled.size == ImageSize(width: 32, height: 24))
        #expect(FormatFixtures.showsQuadrants(scaled, tolerance: 16))
    }

    @Test("both refuse more pixels than allowed, after reading the header only")
    func pixelLimits() throws {
        let directory = TemporaryDirectory()
        let avif = try FormatFixtures.avif([FormatFixtures.quadrants()])
        let heic = try FormatFixtures.heic(FormatFixtures.quadrants(), directory: URL(fileURLWithPath: directory.path))
        let small = ImageDecodingOptions(maximumPixelCount: 1_000)
        let avifError = #expect(throws: ImageDecodingError.self) { try AVIFDecoder().decode(avif, options: small) }
        #expect(avifError?.code == .tooManyPixels(width: 64, height: 48, limit: 1_000))
        let heicError = #expect(throws: ImageDecodingError.self) { try HEIFDecoder().decode(heic, options: small) }
        #expect(heicError?.code == .tooManyPixels(width: 64, height: 48, limit: 1_000))
    }

    @Test("a HEIC whose coded size is larger than the size it declares is refused: libheif 1.15 leaves the difference unwritten")
    func codedSizeBeyondDeclared() throws {
        // Given the fixture with one byte of its HEVC parameter sets changed: it codes 158 columns and declares 64
        let directory = TemporaryDirectory()
        var damaged = try FormatFixtures.heic(FormatFixtures.quadrants(), directory: URL(fileURLWithPath: directory.path))
        try #require(damaged.count > 100 && damaged[100] == 0x40, "the fixture's byte 100 is the one this test knows")
        damaged[100] ^= 0xde

        // Then the decode is refused, naming both sizes
        let error = #expect(throws: ImageDecodingError.self) { try HEIFDecoder().decode(damaged, options: options) }
        #expect(error?.code == .corrupt && error?.detail == "decodes to 158x48, declares 64x48", "\(String(describing: error))")
    }

    /// A HEIF file's boxes down to `iref`, with one `dimg` reference per pair: no image, only references.
    static func heifReferences(_ pairs: [(from: UInt16, to: UInt16)]) -> Data {
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
            let size = UInt32(8 + body.count)
            return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + body
        }
        let references = pairs.flatMap { pair in
            box("dimg", withUnsafeBytes(of: pair.from.bigEndian, Array.init) + [0, 1] + withUnsafeBytes(of: pair.to.bigEndian, Array.init))
        }
        let meta = box("meta", [0, 0, 0, 0] + box("iref", [0, 0, 0, 0] + references))
        return Data(box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)) + meta)
    }

    @Test("a HEIC whose derived images loop or nest too deep is refused before libheif, whose recursion would overflow the stack")
    func referenceLoops() throws {
        let loop = #expect(throws: ImageDecodingError.self) { try HEIFDecoder().decode(Self.heifReferences([(2, 2)]), options: options) }
        #expect(loop?.detail == "item 2 is derived from itself")
        let cycle = HEIFItemReferences.problem(in: Self.heifReferences([(1, 2), (2, 3), (3, 1)]))
        #expect(cycle?.hasSuffix("is derived from itself") == true)
        let deep = (1...40).map { (from: UInt16($0), to: UInt16($0 + 1)) }
        #expect(HEIFItemReferences.problem(in: Self.heifReferences(deep)) == "derived images nest deeper than 16")
        // Wherever the search starts (the order follows the item numbers' hashes), a deep chain is found.
        var generator = SeededGenerator(seed: 16)
        for _ in 0..<200 {
            let items = Array(Set((0..<40).map { _ in UInt16.random(in: 1...60_000, using: &generator) })).shuffled(using: &generator)
            let chain = zip(items, items.dropFirst()).map { (from: $0, to: $1) }
            #expect(HEIFItemReferences.problem(in: Self.heifReferences(chain)) == "derived images nest deeper than 16", "\(items)")
        }
        #expect(HEIFItemReferences.problem(in: Self.heifReferences([(1, 2), (1, 3), (1, 2), (4, 2)])) == nil, "shared tiles are no loop")
        let grid = try Data(contentsOf: FuzzRegressionTests.root.appendingPathComponent("heic/grid-larger-than-ispe.heic"))
        #expect(HEIFItemReferences.problem(in: grid) == nil)
        for name in ["grid-refers-to-itself", "grid-refers-to-itself-oversized-entry"] {
            let selfReferring = try Data(contentsOf: FuzzRegressionTests.root.appendingPathComponent("heic/\(name).heic"))
            #expect(
                HEIFItemReferences.problem(in: selfReferring) == "item 2 is derived from itself", "\(name): entries are read as libheif reads them")
        }
    }

    @Test("a HEIC whose grid declares more pixels than the limit is refused before libheif allocates it")
    func oversizedGrid() throws {
        let regressions = FuzzRegressionTests.root.appendingPathComponent("heic")
        let fitting = try Data(contentsOf: regressions.appendingPathComponent("grid-larger-than-ispe.heic"))
        #expect(HEIFCanvases.sizes(in: fitting) == [ImageSize(width: 10240, height: 6144)])
        let huge = try Data(contentsOf: regressions.appendingPathComponent("grid-of-a-gigapixel.heic"))
        #expect(HEIFCanvases.sizes(in: huge) == [ImageSize(width: 32767, height: 32767)])
        let error = #expect(throws: ImageDecodingError.self) { try HEIFDecoder().decode(huge, options: options) }
        #expect(error?.code == .tooManyPixels(width: 32767, height: 32767, limit: options.maximumPixelCount), "\(String(describing: error))")
        // Cut anywhere, the item data is read as far as it goes, never past it.
        for length in 0..<huge.count { _ = HEIFCanvases.sizes(in: huge.prefix(length)) }
    }

    @Test("truncated AVIF and HEIC are errors of their format; a bit-flipped one decodes to the same image every time, or is such an error")
    func damagedInput() throws {
        let directory = TemporaryDirectory()
        let samples: [(Data, any ImageDecoding, ImageFormat)] = [
            (try FormatFixtures.avif([FormatFixtures.quadrants(alpha: true)]), AVIFDecoder(), .avif),
            (try FormatFixtures.heic(FormatFixtures.quadrants(), directory: URL(fileURLWithPath: directory.path)), HEIFDecoder(), .heic),
        ]
        var generator = SeededGenerator(seed: 5)
        for (data, decoder, format) in samples {
            for length in stride(from: 0, to: data.count, by: max(1, data.count / 30)) {
                let error = #expect(throws: ImageDecodingError.self, "\(length) bytes") { try decoder.decode(data.prefix(length), options: options) }
                #expect(error?.format == format, "\(length) bytes: \(String(describing: error))")
            }
            var decoded = 0
            var rejected = 0
            for _ in 0..<150 {
                var damaged = data
                let index = Int.random(in: 0..<damaged.count, using: &generator)
                damaged[index] ^= UInt8.random(in: 1...255, using: &generator)
                do {
                    let image = try decoder.decode(damaged, options: options)
                    decoded += 1
                    // Every byte comes from the codec, none from memory it never wrote.
                    #expect(try decoder.decode(damaged, options: options) == image, "\(format), byte \(index)")
                } catch {
                    rejected += 1
                    #expect(error.format == format, "\(format), byte \(index): \(error)")
                }
            }
            #expect(decoded > 0 && rejected > 0, "\(format): \(decoded) decoded, \(rejected) rejected")
        }
    }
}
