import CAvif
import CTurboJPEG
import Foundation
import Testing

@testable import ImagoCodecs

/// Each glitch is made in a small generated file, and each test first shows
/// that the file has the glitch (the library alone refuses or warns), then
/// that Imago shows the image as a browser does, or names the real cause.
@Suite("Real-world glitches: what browsers show is shown, what is refused names its cause")
struct RealWorldGlitchTests {
    let options = ImageDecodingOptions()

    @Test("a JPEG with extraneous bytes before a marker decodes")
    func jpegExtraneousBytes() throws {
        var jpeg = try JPEGEncoder(quality: 90).encode(FormatFixtures.quadrants())
        let frameMarker = try #require(jpeg.indices.dropLast().first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.insert(contentsOf: [0x12, 0x34, 0x56], at: frameMarker)

        // TurboJPEG's header call warns about them, with a valid size.
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        let status = jpeg.withUnsafeBytes { bytes in
            tjDecompressHeader3(handle, bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count), &width, &height, &subsampling, &colorspace)
        }
        #expect(status != 0 && tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue))
        #expect(String(cString: tjGetErrorStr2(handle)).contains("extraneous bytes"))

        let image = try JPEGDecoder().decode(jpeg, options: options)
        #expect(image.size == ImageSize(width: 64, height: 48))
        #expect(FormatFixtures.showsQuadrants(image))
    }

    @Test("a JPEG whose error follows a warning is refused, not shown from a buffer never written")
    func jpegErrorAfterWarning() throws {
        // Extraneous bytes before the frame (a warning), and no quantization tables (an error).
        let plain = try JPEGEncoder(quality: 90).encode(FormatFixtures.quadrants())
        var jpeg = Data(plain.prefix(2))
        var offset = 2
        while offset + 4 <= plain.count, plain[offset] == 0xFF, plain[offset + 1] != 0xDA {
            let end = offset + 2 + (Int(plain[offset + 2]) << 8 | Int(plain[offset + 3]))
            if plain[offset + 1] == 0xC0 { jpeg.append(contentsOf: [0x12, 0x34, 0x56]) }
            if plain[offset + 1] != 0xDB { jpeg.append(plain[offset..<end]) }
            offset = end
        }
        jpeg.append(plain[offset...])

        // TurboJPEG fails the decode but calls the error a warning.
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var pixels = [UInt8](repeating: 0, count: 64 * 48 * 3)
        let status = jpeg.withUnsafeBytes { bytes in
            tjDecompress2(handle, bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count), &pixels, 64, 0, 48, TJPF_RGB.rawValue, 0)
        }
        #expect(status != 0 && tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue))
        #expect(String(cString: tjGetErrorStr2(handle)).contains("Quantization table"))

        let error = #expect(throws: ImageDecodingError.self) { try JPEGDecoder().decode(jpeg, options: options) }
        #expect(error?.code == .corrupt && error?.detail.contains("Quantization table") == true, "\(String(describing: error))")
    }

    @Test("an AVIF with a crop at an odd offset decodes, cropped")
    func avifOddCrop() throws {
        // Centred: 11 pixels off the left, 7 off the top, both odd.
        let data = try FormatFixtures.avif([FormatFixtures.quadrants()], crop: (x: 11, y: 7, width: 42, height: 34))
        let strict = try #require(libavifParseError(data, strict: true))
        #expect(strict.contains("BMFF parsing failed"), "\(strict)")
        #expect(libavifParseError(data, strict: false) == nil)

        let image = try AVIFDecoder().decode(data, options: options)
        #expect(image.size == ImageSize(width: 42, height: 34))
        #expect(FormatFixtures.showsQuadrants(image, tolerance: 24))
        // Scaled decoding starts from the cropped size.
        let half = try AVIFDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 21, height: 17)))
        #expect(half.size == ImageSize(width: 21, height: 17))
    }

    @Test("an AVIF without a pixi property decodes")
    func avifWithoutPixi() throws {
        let data = try renaming("pixi", to: "pixj", in: FormatFixtures.avif([FormatFixtures.quadrants()]))
        #expect(libavifParseError(data, strict: true) != nil)
        let image = try AVIFDecoder().decode(data, options: options)
        #expect(FormatFixtures.showsQuadrants(image, tolerance: 24))
    }

    @Test("an AVIF refusal carries libavif's diagnostic, not only its result code")
    func avifDiagnostic() throws {
        // Without ispe (the image's size) the item cannot be decoded, strict or not.
        let data = try renaming("ispe", to: "ispx", in: FormatFixtures.avif([FormatFixtures.quadrants()]))
        let error = #expect(throws: ImageDecodingError.self) { _ = try AVIFDecoder().decode(data, options: options) }
        #expect(error?.code == .corrupt)
        #expect(error?.detail.contains("ispe") == true, "\(String(describing: error))")
    }

    @Test("a GIF with no colour table at all decodes with grey levels")
    func gifWithoutColorTables() throws {
        let indices: [UInt8] = [0, 1, 128, 255]
        let data = FormatFixtures.gifWithoutColorTables(width: 4, height: 1, indices: indices)
        let image = try GIFDecoder().decode(data, options: options)
        #expect(image.size == ImageSize(width: 4, height: 1))
        for (x, index) in indices.enumerated() {
            #expect(FormatFixtures.rgba(image, x: x, y: 0) == [index, index, index, 255])
        }
    }

    @Test("a palette PNG without its PLTE is refused naming the missing palette; with it, it decodes")
    func pngMissingPalette() throws {
        let header = PNGChunks.chunk("IHDR", PNGChunks.header(width: 2, height: 2, bitDepth: 8, colorType: 3))
        let pixels = PNGChunks.chunk("IDAT", PNGChunks.zlibStored([0, 0, 1, 0, 1, 0]))
        let end = PNGChunks.chunk("IEND", Data())
        let palette = PNGChunks.chunk("PLTE", Data([255, 0, 0, 0, 0, 255]))

        let whole = try PNGDecoder().decode(PNGChunks.signature + header + palette + pixels + end, options: options)
        #expect(FormatFixtures.rgba(whole, x: 1, y: 0) == [0, 0, 255, 255])

        let error = #expect(throws: ImageDecodingError.self) {
            _ = try PNGDecoder().decode(PNGChunks.signature + header + pixels + end, options: options)
        }
        #expect(error?.code == .corrupt)
        #expect(error?.detail.contains("palette") == true || error?.detail.contains("PLTE") == true, "\(String(describing: error))")
        #expect(error?.detail.contains("non-recoverable") == false)
    }

    @Test("an empty or truncated header is corrupt data, not too many pixels")
    func emptyHeaders() throws {
        let frame = FormatFixtures.GIFFrame(width: 1, height: 1, indices: [0])
        let zeroWidth = try FormatFixtures.gif(width: 0, height: 4, palette: [(0, 0, 0), (255, 255, 255)], frames: [frame])
        let truncated = try JPEGEncoder().encode(FormatFixtures.quadrants()).prefix(40)
        for (data, decoder) in [(zeroWidth, GIFDecoder() as any ImageDecoding), (Data(truncated), JPEGDecoder())] {
            let error = #expect(throws: ImageDecodingError.self) { _ = try decoder.decode(data, options: options) }
            #expect(error?.code == .corrupt, "\(String(describing: error))")
        }
    }

    @Test("a WebP's EXIF orientation is applied, before scaling, as a JPEG's is")
    func webpOrientation() throws {
        let stored = try WebPEncoder(quality: 95).encode(FormatFixtures.quadrants())
        // Orientation 6: stored turned a quarter anti-clockwise; shown turned clockwise.
        let data = try Self.webp(stored, exifOrientation: 6, width: 64, height: 48)
        #expect(ImageOrientation(webp: data) == .right)
        let image = try WebPDecoder().decode(data, options: options)
        #expect(image.size == ImageSize(width: 48, height: 64))
        // The stored top-left (red) is now the top-right corner.
        #expect(FormatFixtures.rgba(image, x: 44, y: 4).prefix(3).map { $0 > 128 } == [true, false, false])
        #expect(FormatFixtures.rgba(image, x: 4, y: 4).prefix(3).map { $0 > 128 } == [false, false, true])
        let small = try WebPDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 24, height: 32)))
        #expect(small.size == ImageSize(width: 24, height: 32))
        // Damaged chunk sizes are read as no orientation.
        #expect(ImageOrientation(webp: data.prefix(40)) == .up)
    }

    // MARK: Helpers

    /// libavif's own verdict on parsing `data`, with its strict checks on or off: nil when it parses.
    private func libavifParseError(_ data: Data, strict: Bool) -> String? {
        guard let decoder = avifDecoderCreate() else { return "no decoder" }
        defer { avifDecoderDestroy(decoder) }
        decoder.pointee.strictFlags = avifStrictFlags(strict ? AVIF_STRICT_ENABLED.rawValue : AVIF_STRICT_DISABLED.rawValue)
        let result = data.withUnsafeBytes { bytes in
            _ = avifDecoderSetIOMemory(decoder, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
            return avifDecoderParse(decoder)
        }
        return result == AVIF_RESULT_OK ? nil : String(cString: avifResultToString(result))
    }

    /// `data` with the one box type `from` renamed: the box stays, unknown to readers.
    private func renaming(_ from: String, to: String, in data: Data) throws -> Data {
        let pattern = Data(from.utf8)
        let found = try #require(data.range(of: pattern))
        #expect(data[found.upperBound...].range(of: pattern) == nil)
        var copy = data
        copy.replaceSubrange(found, with: Data(to.utf8))
        return copy
    }

    /// A simple-format WebP (`RIFF`, `WEBP`, one `VP8 ` chunk) rewritten in
    /// the extended format with an EXIF chunk holding `exifOrientation`.
    static func webp(_ simple: Data, exifOrientation: UInt16, width: Int, height: Int) throws -> Data {
        func littleEndian(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            Array(type.utf8) + littleEndian(payload.count, 4) + payload + (payload.count % 2 == 1 ? [0] : [])
        }
        // A big-endian TIFF with one IFD entry: orientation, SHORT, count 1.
        let tiff: [UInt8] =
            Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1]
            + [UInt8(exifOrientation >> 8), UInt8(exifOrientation & 0xFF), 0, 0, 0, 0, 0, 0]
        let extended = chunk("VP8X", [0x08, 0, 0, 0] + littleEndian(width - 1, 3) + littleEndian(height - 1, 3))
        let body = Array("WEBP".utf8) + extended + Array(simple[12...]) + chunk("EXIF", tiff)
        return Data(Array("RIFF".utf8) + littleEndian(body.count, 4) + body)
    }
}
