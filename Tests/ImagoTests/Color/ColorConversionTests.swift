import CAvif
import CLcms2
import Foundation
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoCodecs

/// Photos in wide-gamut and print colour spaces, made here from an sRGB
/// original with Little CMS's own `jpgicc` (Debian's liblcms2-utils, with
/// the profiles of Debian's libgs-common; Display P3's is built with lcms):
/// Imago's decode must land within a mean ΔE2000 of 2 of lcms's own
/// conversion back to sRGB, and of the original; the same pixels read as
/// if they were sRGB must not (so the checks can fail).
@Suite struct ColorConversionTests {
    static let profiles = "/usr/share/color/icc/ghostscript"

    enum SourceSpace: String, CaseIterable, CustomTestStringConvertible {
        case displayP3 = "Display P3"
        case adobeRGB = "Adobe RGB (1998)"
        case proPhoto = "ProPhoto RGB"
        case cmyk = "CMYK (Ghostscript's default_cmyk.icc)"

        var testDescription: String { rawValue }

        /// The profile file `jpgicc` converts the original to.
        func profilePath(in folder: TemporaryDirectory) throws -> String {
            switch self {
            case .displayP3:
                let path = folder.appending("display-p3.icc")
                try MetadataFixtures.displayP3Profile().write(to: URL(fileURLWithPath: path))
                return path
            case .adobeRGB: return ColorConversionTests.profiles + "/a98.icc"
            case .proPhoto: return ColorConversionTests.profiles + "/rommrgb.icc"
            case .cmyk: return ColorConversionTests.profiles + "/default_cmyk.icc"
            }
        }
    }

    /// The original, the file in `space` with its profile, and lcms's
    /// conversion of that file back to sRGB (no profile), all decoded.
    struct Made {
        var original: Image
        var converted: Data
        var reference: Image
    }

    static func make(_ space: SourceSpace) throws -> Made {
        let folder = TemporaryDirectory("imago-color")
        let original = ColorFixtures.photo(width: 192, height: 128)
        let originalPath = folder.appending("original.jpg")
        try JPEGEncoder(quality: 98).encode(original).write(to: URL(fileURLWithPath: originalPath))
        let convertedPath = folder.appending("converted.jpg")
        let referencePath = folder.appending("reference.jpg")
        // -e embeds the output profile; the second run reads it back. Into
        // print, relative colorimetric, as a photo is prepared for print:
        // perceptual would compress the whole gamut towards the paper's.
        let intent = space == .cmyk ? "-t1" : "-t0"
        try CommandLineTool.jpgicc.run(["-q98", intent, "-e", "-o" + space.profilePath(in: folder), originalPath, convertedPath])
        try CommandLineTool.jpgicc.run(["-q98", convertedPath, referencePath])
        let decoder = JPEGDecoder()
        return Made(
            original: try decoder.decode(Data(contentsOf: URL(fileURLWithPath: originalPath)), options: .init()),
            converted: try Data(contentsOf: URL(fileURLWithPath: convertedPath)),
            reference: try decoder.decode(Data(contentsOf: URL(fileURLWithPath: referencePath)), options: .init())
        )
    }

    @Test(arguments: SourceSpace.allCases)
    func jpegWithAProfileIsConvertedAsLittleCMSConvertsIt(_ space: SourceSpace) throws {
        // Given a photo converted to `space` by jpgicc, its profile embedded
        let made = try Self.make(space)
        #expect(JPEGSegments.iccProfile(in: made.converted) != nil)

        // When Imago decodes it, and decodes it again keeping the pixels as stored
        let decoded = try JPEGDecoder().decode(made.converted, options: .init())
        let asStored = try JPEGDecoder().decode(made.converted, options: .init(convertsToSRGB: false))

        // Then it is within ΔE2000 2 of lcms's conversion and of the original
        let fromReference = try ColorFixtures.meanDeltaE(decoded, made.reference)
        let fromOriginal = try ColorFixtures.meanDeltaE(decoded, made.original)
        #expect(fromReference <= 2, "mean ΔE2000 \(fromReference) from lcms's conversion")
        #expect(fromOriginal <= 2, "mean ΔE2000 \(fromOriginal) from the original")
        // And the stored pixels shown as sRGB are visibly off, so the
        // conversion is what brought them back
        if space != .cmyk {
            let unconverted = try ColorFixtures.meanDeltaE(asStored, made.original)
            #expect(unconverted > 2 * max(fromOriginal, 1), "mean ΔE2000 \(unconverted) without conversion")
        }
    }

    @Test(arguments: [SourceSpace.displayP3, .proPhoto])
    func pngWebPAndAVIFCarryingTheProfileAreConvertedToo(_ space: SourceSpace) throws {
        // Given the same pixels and profile in PNG, lossless WebP and AVIF
        let made = try Self.make(space)
        let stored = try JPEGDecoder().decode(made.converted, options: .init(convertsToSRGB: false))
        let metadata = ImageMetadata(iccProfile: JPEGSegments.iccProfile(in: made.converted))
        let files: [(String, Data, ImageDecoding)] = [
            ("PNG", try PNGEncoder(metadata: metadata).encode(stored), PNGDecoder()),
            ("WebP", try WebPEncoder(quality: 100, lossless: true, metadata: metadata).encode(stored), WebPDecoder()),
            ("AVIF", try AVIFEncoder(quality: 95, metadata: metadata).encode(stored), AVIFDecoder()),
        ]
        for (name, data, decoder) in files {
            // When each is decoded
            let decoded = try decoder.decode(data, options: .init())
            // Then it matches lcms's conversion of the JPEG
            let fromReference = try ColorFixtures.meanDeltaE(decoded, made.reference)
            #expect(fromReference <= 2, "\(name): mean ΔE2000 \(fromReference) from lcms's conversion")
        }
    }

    @Test func tiffMadeByTificcIsConvertedAsLittleCMSConvertsIt() throws {
        // Given a 16-bit ProPhoto TIFF made by tificc from an sRGB original, and tificc's conversion back
        let folder = TemporaryDirectory("imago-color-tiff")
        let original = ColorFixtures.photo(width: 96, height: 64)
        let (originalPath, convertedPath, referencePath) = (folder.appending("o.tif"), folder.appending("c.tif"), folder.appending("r.tif"))
        try FormatFixtures.tiff([FormatFixtures.TIFFPage(original)]).write(to: URL(fileURLWithPath: originalPath))
        try CommandLineTool.tificc.run(["-w16", "-e", "-o" + Self.profiles + "/rommrgb.icc", originalPath, convertedPath])
        try CommandLineTool.tificc.run(["-w8", convertedPath, referencePath])
        let converted = try Data(contentsOf: URL(fileURLWithPath: convertedPath))
        // When Imago decodes it
        let decoded = try TIFFDecoder().decode(converted, options: .init())
        let reference = try TIFFDecoder().decode(Data(contentsOf: URL(fileURLWithPath: referencePath)), options: .init())
        // Then it is within ΔE2000 2 of tificc's conversion and of the original
        #expect(try ColorFixtures.meanDeltaE(decoded, reference) <= 2)
        #expect(try ColorFixtures.meanDeltaE(decoded, original) <= 2)
        #expect(try ColorFixtures.meanDeltaE(TIFFDecoder().decode(converted, options: .init(convertsToSRGB: false)), original) > 2)
    }

    @Test func anImageWithoutAProfileOrWithSRGBsIsUnchanged() throws {
        // Given a photo without a profile, and the same with sRGB's profile
        let original = ColorFixtures.photo(width: 64, height: 48)
        let plain = try PNGEncoder().encode(original)
        let srgb = try PNGEncoder(metadata: ImageMetadata(iccProfile: ColorFixtures.srgbProfile())).encode(original)
        // When both are decoded
        // Then the pixels are the original's, to the byte
        #expect(try PNGDecoder().decode(plain, options: .init()).pixels == original.pixels)
        #expect(try PNGDecoder().decode(srgb, options: .init()).pixels == original.pixels)
        #expect(DeclaredColorSpace.icc(ColorFixtures.srgbProfile()).makeProfile() == nil)
    }

    @Test func aDamagedOrMismatchedProfileLeavesThePixelsAsStored() throws {
        // Given profiles that cannot apply: garbage, truncated, and a CMYK profile on RGB pixels
        let original = ColorFixtures.photo(width: 32, height: 24)
        let cmyk = try Data(contentsOf: URL(fileURLWithPath: Self.profiles + "/default_cmyk.icc"))
        // and a real profile padded past the 1 MiB any profile is read up to
        let huge = MetadataFixtures.displayP3Profile() + Data(count: ImageMetadata.maximumBlockSize)
        #expect(ColorTransform.toSRGB(from: .icc(huge), .rgb8, to: .rgb8) == nil)
        for profile in [MetadataFixtures.iccProfile(size: 3_000), ColorFixtures.srgbProfile().prefix(200), cmyk] {
            let data = try PNGEncoder(metadata: ImageMetadata(iccProfile: profile)).encode(original)
            // When decoded
            // Then the decode succeeds with the stored pixels, as a browser shows them
            #expect(try PNGDecoder().decode(data, options: .init()).pixels == original.pixels)
        }
    }
}

/// Colour spaces declared otherwise than by an ICC profile (code points,
/// PNG's chunks), and 16-bit sources.
@Suite struct DeclaredColorSpaceTests {
    /// Display P3 pixels: what a phone's photo holds.
    static let image = ColorFixtures.photo(width: 48, height: 32)

    @Test func avifLabelledDisplayP3ByCodePointsIsConvertedAsItsProfileWouldBe() throws {
        // Given the same pixels labelled P3 by code points (12, sRGB curve 13), and unlabelled
        let labelled = try FormatFixtures.avif([Self.image], cicp: (12, 13))
        let plain = try FormatFixtures.avif([Self.image], cicp: (1, 13))
        // When both are decoded
        let decoded = try AVIFDecoder().decode(labelled, options: .init())
        let stored = try AVIFDecoder().decode(plain, options: .init())
        // Then the labelled one is the unlabelled one converted from Display P3's ICC profile
        let expected = stored.convertedToSRGB(from: .icc(MetadataFixtures.displayP3Profile()))
        #expect(expected.pixels != stored.pixels)
        #expect(ColorFixtures.largestDifference(decoded, expected) <= 1)
    }

    @Test func tenBitAVIFIsConvertedBeforeItIsReducedTo8Bits() throws {
        // Given a 10-bit AVIF labelled Display P3
        let data = try FormatFixtures.avif([Self.image], cicp: (12, 13), depth: 10)
        // When decoded, and decoded as stored
        let decoded = try AVIFDecoder().decode(data, options: .init())
        let stored = try AVIFDecoder().decode(data, options: .init(convertsToSRGB: false))
        // Then it is lcms's conversion of libavif's 16-bit RGB, not of the
        // 8 bits it reduces to (which differ by several steps in the shadows)
        let space = DeclaredColorSpace.cicp(primaries: 12, transfer: 13)
        let exact = try ColorFixtures.convertedAt16Bits(try ColorFixtures.avifRGB16(data), width: stored.width, from: space)
        #expect(decoded.pixels == exact.pixels)
        #expect(ColorFixtures.largestDifference(stored.convertedToSRGB(from: space), exact) >= 2)
    }

    @Test func heicLabelledDisplayP3ByNclxIsConverted() throws {
        // Given an HEIC labelled P3 by its nclx box, as an iPhone writes it
        let folder = TemporaryDirectory("imago-heic")
        let data = try FormatFixtures.heic(Self.image, directory: URL(fileURLWithPath: folder.path), nclxPrimaries: 12)
        // When decoded, and decoded as stored
        let decoded = try HEIFDecoder().decode(data, options: .init())
        let stored = try HEIFDecoder().decode(data, options: .init(convertsToSRGB: false))
        // Then the colours were converted from Display P3
        let expected = stored.convertedToSRGB(from: .icc(MetadataFixtures.displayP3Profile()))
        #expect(expected.pixels != stored.pixels)
        #expect(ColorFixtures.largestDifference(decoded, expected) <= 1)
    }

    @Test func sixteenBitPNGIsConvertedBeforeItIsReducedTo8Bits() throws {
        // Given a 16-bit PNG with ProPhoto's profile, whose low bytes matter
        let profile = try Data(contentsOf: URL(fileURLWithPath: ColorConversionTests.profiles + "/rommrgb.icc"))
        let (width, height) = (32, 16)
        var samples = [UInt16]()
        for y in 0..<height {
            for x in 0..<width { samples += [UInt16(x * 2047 + y * 13), UInt16(20_000 + y * 2_000 + x), UInt16(60_000 - x * 1_500 - y * 7)] }
        }
        let png = ColorFixtures.png16(width: width, height: height, samples: samples, iccProfile: profile)
        // When decoded
        let decoded = try PNGDecoder().decode(png, options: .init())
        // Then it is lcms's 16-bit to 8-bit conversion of those samples
        guard let transform = ColorTransform.toSRGB(from: .icc(profile), .rgb16, to: .rgb8) else {
            Issue.record("no transform from ProPhoto")
            return
        }
        var expected = [UInt8](repeating: 0, count: width * height * 3)
        samples.withUnsafeBytes { source in
            expected.withUnsafeMutableBytes { transform.convert(source.baseAddress!, into: $0.baseAddress!, count: width * height) }
        }
        #expect(decoded.pixels == expected)
    }

    @Test func pngGammaAndChromaticitiesAreHonouredWithoutAProfile() throws {
        // Given a gray-ish RGB PNG stored with linear gamma (gAMA 1.0), with gAMA 1/2.2, and with sRGB
        let pixels = [UInt8](repeating: 128, count: 4 * 4 * 3)
        let linear = ColorFixtures.png8(width: 4, height: 4, pixels: pixels, chunks: [("gAMA", ColorFixtures.bigEndian([100_000]))])
        let twoPointTwo = ColorFixtures.png8(width: 4, height: 4, pixels: pixels, chunks: [("gAMA", ColorFixtures.bigEndian([45_455]))])
        let srgb = ColorFixtures.png8(
            width: 4, height: 4, pixels: pixels, chunks: [("sRGB", Data([0])), ("gAMA", ColorFixtures.bigEndian([100_000]))]
        )
        // A wide-gamut cHRM (Adobe RGB's primaries) with gAMA 1/2.2
        let adobe = ColorFixtures.bigEndian([31_270, 32_900, 64_000, 33_000, 21_000, 71_000, 15_000, 6_000])
        let wide = ColorFixtures.png8(
            width: 4, height: 4, pixels: [200, 60, 40] + pixels.dropFirst(3),
            chunks: [("gAMA", ColorFixtures.bigEndian([45_455])), ("cHRM", adobe)]
        )
        // When decoded
        // Then linear 128 shows as sRGB's 188 (half the light), 1/2.2 and sRGB as stored
        let lifted = try PNGDecoder().decode(linear, options: .init()).pixels[0]
        #expect((187...189).contains(lifted))
        #expect(try PNGDecoder().decode(twoPointTwo, options: .init()).pixels == pixels)
        #expect(try PNGDecoder().decode(srgb, options: .init()).pixels == pixels)
        #expect(try PNGDecoder().decode(linear, options: .init(convertsToSRGB: false)).pixels == pixels)
        // And a wide-gamut red becomes a more saturated sRGB red
        let red = try PNGDecoder().decode(wide, options: .init()).pixels.prefix(3)
        #expect(red[0] > 220, "\(Array(red))")
    }

    @Test(arguments: ["a98.icc", "rommrgb.icc", "default_gray.icc"])
    func theMatrixShaperPathMatchesLittleCMS(_ name: String) throws {
        // Given a matrix-shaper profile, and lcms's own transform from it
        let data = try Data(contentsOf: URL(fileURLWithPath: ColorConversionTests.profiles + "/" + name))
        let profile = try #require(data.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) })
        defer { cmsCloseProfile(profile) }
        let isGray = cmsGetColorSpace(profile) == cmsSigGrayData
        let target = try #require(isGray ? DeclaredColorSpace.srgbGrayProfile() : cmsCreate_sRGBProfile())
        defer { cmsCloseProfile(target) }
        let type = isGray ? imago_TYPE_GRAY_8 : imago_TYPE_RGB_8
        let reference = try #require(cmsCreateTransform(profile, type, target, type, cmsUInt32Number(INTENT_PERCEPTUAL), 0))
        defer { cmsDeleteTransform(reference) }
        let shaper = try #require(MatrixShaper(profile))
        // When 20,000 seeded colours go through both
        var generator = SeededGenerator(seed: 7)
        let input = (0..<60_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let channels = isGray ? 1 : 3
        var ours = [UInt8](repeating: 0, count: input.count)
        var theirs = ours
        input.withUnsafeBytes { source in
            ours.withUnsafeMutableBytes {
                shaper.convert(source.baseAddress!, into: $0.baseAddress!, count: input.count / channels, bytesPerPixel: channels)
            }
            theirs.withUnsafeMutableBytes { cmsDoTransform(reference, source.baseAddress!, $0.baseAddress!, cmsUInt32Number(input.count / channels)) }
        }
        // Then they agree within one step
        let largest = zip(ours, theirs).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(largest <= 1, "\(name): largest difference \(largest)")
    }

    @Test func codePointsWithoutAConversionLeaveThePixelsAsStored() {
        // PQ and HLG (HDR), unknown primaries, and sRGB itself: nothing to build
        for (primaries, transfer) in [(9, 16), (9, 18), (99, 13), (1, 13), (2, 2)] {
            #expect(DeclaredColorSpace.cicp(primaries: primaries, transfer: transfer).makeProfile() == nil, "\(primaries)/\(transfer)")
        }
        #expect(DeclaredColorSpace.cicp(primaries: 12, transfer: 13).makeProfile() != nil)
        #expect(DeclaredColorSpace.pngChunks(gamma: 0, chromaticities: nil).makeProfile() == nil)
        #expect(DeclaredColorSpace.pngChunks(gamma: 1, chromaticities: nil).makeProfile() == nil)
    }
}

/// What the colour tests build their inputs with.
enum ColorFixtures {
    /// A photo-like sRGB image: smooth hues at a photo's saturation,
    /// lightness from 25% to 85% (a printer's gamut holds them: print
    /// clips what is darker than its black, about L* 15 for a press), and
    /// a little texture.
    static func photo(width: Int, height: Int) -> Image {
        var generator = SeededGenerator(seed: 28)
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let hue = Double(x) / Double(width) * 6
                let lightness = 0.25 + 0.6 * Double(y) / Double(height - 1)
                let saturation = 0.45
                let chroma = (1 - abs(2 * lightness - 1)) * saturation
                let second = chroma * (1 - abs(hue.truncatingRemainder(dividingBy: 2) - 1))
                let (r, g, b): (Double, Double, Double) =
                    switch Int(hue) {
                    case 0: (chroma, second, 0)
                    case 1: (second, chroma, 0)
                    case 2: (0, chroma, second)
                    case 3: (0, second, chroma)
                    case 4: (second, 0, chroma)
                    default: (chroma, 0, second)
                    }
                let base = lightness - chroma / 2
                let noise = Double(Int(generator.next() % 5) - 2) / 255
                for channel in [r, g, b] { pixels.append(UInt8(max(0, min(255, ((channel + base + noise) * 255).rounded())))) }
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)!
    }

    /// The largest difference between two images' samples, of one layout.
    static func largestDifference(_ first: Image, _ second: Image) -> Int {
        guard first.size == second.size, first.pixelFormat == second.pixelFormat else { return .max }
        return zip(first.pixels, second.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    /// The mean difference between two images' samples, of one layout.
    static func meanDifference(_ first: Image, _ second: Image) -> Double {
        let total = zip(first.pixels, second.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        return Double(total) / Double(max(1, first.pixels.count))
    }

    /// 16-bit RGB samples converted from `space` to 8-bit sRGB.
    static func convertedAt16Bits(_ samples: [UInt16], width: Int, from space: DeclaredColorSpace) throws -> Image {
        guard let transform = ColorTransform.toSRGB(from: space, .rgb16, to: .rgb8) else {
            throw CommandLineTool.Failure(description: "no transform from \(space)")
        }
        var pixels = [UInt8](repeating: 0, count: samples.count)
        samples.withUnsafeBytes { source in
            pixels.withUnsafeMutableBytes { transform.convert(source.baseAddress!, into: $0.baseAddress!, count: samples.count / 3) }
        }
        return Image(width: width, height: samples.count / 3 / width, pixelFormat: .rgb8, pixels: pixels)!
    }

    /// An opaque still AVIF's pixels as libavif gives them at 16 bits.
    static func avifRGB16(_ data: Data) throws -> [UInt16] {
        guard let image = avifImageCreateEmpty(), let decoder = avifDecoderCreate() else { throw CommandLineTool.Failure(description: "libavif") }
        defer {
            avifImageDestroy(image)
            avifDecoderDestroy(decoder)
        }
        let read = data.withUnsafeBytes { avifDecoderReadMemory(decoder, image, $0.baseAddress, $0.count) }
        guard read == AVIF_RESULT_OK else { throw CommandLineTool.Failure(description: "avifDecoderReadMemory failed") }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGB
        rgb.depth = 16
        rgb.rowBytes = image.pointee.width * 6
        var samples = [UInt16](repeating: 0, count: Int(image.pointee.width * image.pointee.height) * 3)
        let converted = samples.withUnsafeMutableBytes { buffer in
            rgb.pixels = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return avifImageYUVToRGB(image, &rgb)
        }
        guard converted == AVIF_RESULT_OK else { throw CommandLineTool.Failure(description: "avifImageYUVToRGB failed") }
        return samples
    }

    static func bigEndian(_ values: [UInt32]) -> Data {
        values.reduce(into: Data()) { data, value in withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) } }
    }

    /// An 8-bit RGB PNG with `chunks` before its image data.
    static func png8(width: Int, height: Int, pixels: [UInt8], chunks: [(String, Data)]) -> Data {
        let rowBytes = width * 3
        var rows = [UInt8]()
        for y in 0..<height { rows += [0] + pixels[(y * rowBytes)..<((y + 1) * rowBytes)] }
        return png(width: width, height: height, bitDepth: 8, rows: rows, chunks: chunks)
    }

    /// A 16-bit RGB PNG with an iCCP profile.
    static func png16(width: Int, height: Int, samples: [UInt16], iccProfile: Data) -> Data {
        var rows = [UInt8]()
        for y in 0..<height {
            rows.append(0)
            for sample in samples[(y * width * 3)..<((y + 1) * width * 3)] { rows += [UInt8(sample >> 8), UInt8(sample & 0xFF)] }
        }
        let iccp = Data("profile".utf8) + Data([0, 0]) + PNGChunks.zlibStored(Array(iccProfile))
        return png(width: width, height: height, bitDepth: 16, rows: rows, chunks: [("iCCP", iccp)])
    }

    private static func png(width: Int, height: Int, bitDepth: UInt8, rows: [UInt8], chunks: [(String, Data)]) -> Data {
        var file = PNGChunks.signature
        file += PNGChunks.chunk("IHDR", PNGChunks.header(width: UInt32(width), height: UInt32(height), bitDepth: bitDepth, colorType: 2))
        for (type, payload) in chunks { file += PNGChunks.chunk(type, payload) }
        file += PNGChunks.chunk("IDAT", PNGChunks.zlibStored(rows))
        file += PNGChunks.chunk("IEND", Data())
        return file
    }

    /// lcms's own sRGB profile, as many files embed it.
    static func srgbProfile() -> Data {
        guard let profile = cmsCreate_sRGBProfile() else { return Data() }
        defer { cmsCloseProfile(profile) }
        return (try? save(profile)) ?? Data()
    }

    static func save(_ profile: cmsHPROFILE) throws -> Data {
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else {
            throw CommandLineTool.Failure(description: "lcms could not save a profile")
        }
        var data = Data(count: Int(size))
        let saved = data.withUnsafeMutableBytes { cmsSaveProfileToMem(profile, $0.baseAddress, &size) }
        guard saved != 0 else { throw CommandLineTool.Failure(description: "lcms could not save a profile") }
        return data
    }

    /// The mean CIEDE2000 difference between two sRGB images of one size.
    static func meanDeltaE(_ first: Image, _ second: Image) throws -> Double {
        guard first.size == second.size else {
            throw CommandLineTool.Failure(description: "sizes differ: \(first.size) and \(second.size)")
        }
        let lab = try labValues(first)
        let other = try labValues(second)
        var total = 0.0
        for index in stride(from: 0, to: lab.count, by: 3) {
            var a = cmsCIELab(L: lab[index], a: lab[index + 1], b: lab[index + 2])
            var b = cmsCIELab(L: other[index], a: other[index + 1], b: other[index + 2])
            total += cmsCIE2000DeltaE(&a, &b, 1, 1, 1)
        }
        return total / Double(lab.count / 3)
    }

    private static func labValues(_ image: Image) throws -> [Double] {
        let rgb = image.pixelFormat == .rgb8 ? image : try rgbImage(image)
        guard let srgb = cmsCreate_sRGBProfile(), let lab = cmsCreateLab4Profile(nil) else {
            throw CommandLineTool.Failure(description: "lcms could not build its profiles")
        }
        defer {
            cmsCloseProfile(srgb)
            cmsCloseProfile(lab)
        }
        guard let transform = cmsCreateTransform(srgb, imago_TYPE_RGB_8, lab, imago_TYPE_Lab_DBL, cmsUInt32Number(INTENT_PERCEPTUAL), 0) else {
            throw CommandLineTool.Failure(description: "lcms could not build the Lab transform")
        }
        defer { cmsDeleteTransform(transform) }
        var values = [Double](repeating: 0, count: rgb.width * rgb.height * 3)
        rgb.pixels.withUnsafeBytes { source in
            values.withUnsafeMutableBytes { target in
                cmsDoTransformLineStride(
                    transform, source.baseAddress, target.baseAddress, cmsUInt32Number(rgb.width), cmsUInt32Number(rgb.height),
                    cmsUInt32Number(rgb.bytesPerRow), cmsUInt32Number(rgb.width * 24), 0, 0
                )
            }
        }
        return values
    }

    private static func rgbImage(_ image: Image) throws -> Image {
        var pixels = [UInt8]()
        for y in 0..<image.height {
            for x in 0..<image.width { pixels += FormatFixtures.rgba(image, x: x, y: y).prefix(3) }
        }
        guard let rgb = Image(width: image.width, height: image.height, pixelFormat: .rgb8, pixels: pixels) else {
            throw CommandLineTool.Failure(description: "inconsistent sizes")
        }
        return rgb
    }
}

extension JPEGSegments {
    static func iccProfile(in data: Data) -> Data? { data.withUnsafeBytes { iccProfile(in: $0) } }
}
