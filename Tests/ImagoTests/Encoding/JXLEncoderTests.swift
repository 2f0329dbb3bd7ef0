import CJxl
import Foundation
import ImagoCodecFixtures
import Testing

@testable import ImagoCodecs

@Suite("JPEG XL encoder: lossless and lossy in every pixel format, cjxl's quality scale, metadata")
struct JXLEncoderTests {
    let options = ImageDecodingOptions()

    @Test("lossless (asked for, or quality 100) comes back exactly in every pixel format, with row padding")
    func lossless() throws {
        for format in PixelFixtures.formats {
            // Given a gradient with padded rows
            let image = CodecTests.gradient(width: 67, height: 41, format: format)
            let padded = PixelFixtures.image(67, 41, format, padding: 5, PixelFixtures.pixels(image))
            for encoder in [JXLEncoder(lossless: true), JXLEncoder(quality: 100, effort: 1)] {
                // When written losslessly and read back
                let data = try encoder.encode(padded)
                #expect(ImageFormat(sniffing: data) == .jxl)
                // Then every sample is as it was, in the same layout
                #expect(try JXLDecoder().decode(data, options: options) == image, "\(format)")
            }
        }
    }

    @Test("lossy stays close, and a lower quality makes a smaller file", arguments: PixelFixtures.formats)
    func lossy(format: Image.PixelFormat) throws {
        let photo = CodecTests.gradient(width: 160, height: 120, format: format)
        let fine = try JXLEncoder(quality: 90).encode(photo)
        let coarse = try JXLEncoder(quality: 30).encode(photo)
        #expect(coarse.count < fine.count)
        let decoded = try JXLDecoder().decode(fine, options: options)
        #expect(decoded.pixelFormat == format)
        let error = CodecTests.meanAbsoluteError(decoded, photo)
        #expect(error < 3, "mean error \(error)")
    }

    @Test("quality maps to distance as cjxl -q does: 100 lossless, 90 is 1, 0.09 a step down to 30, faster below, 25 at most")
    func distances() {
        #expect(JXLEncoder.distance(forQuality: 100) == 0)
        #expect(abs(JXLEncoder.distance(forQuality: 90) - 1.0) < 1e-5)
        #expect(abs(JXLEncoder.distance(forQuality: 68) - 2.98) < 1e-5)
        #expect(abs(JXLEncoder.distance(forQuality: 30) - 6.4) < 1e-5)
        #expect(abs(JXLEncoder.distance(forQuality: 25) - (6.4 + 2.5 / 6.25)) < 1e-5)
        #expect(JXLEncoder.distance(forQuality: 1) == 25)
        let all = (1...100).map { JXLEncoder.distance(forQuality: $0) }
        #expect(zip(all, all.dropFirst()).allSatisfy { $0 >= $1 })
        #expect(JXLEncoder(quality: 500, effort: 0).quality == 100)
        #expect(JXLEncoder(quality: -3, effort: 12).effort == 9)
    }

    @Test("the ICC profile becomes the image's colour encoding; EXIF and XMP go into their boxes")
    func metadata() throws {
        let profile = Self.rgbProfile()
        let exif = MetadataFixtures.exif(orientation: 1, fields: [0x010F: "Example Camera"])
        let xmp = MetadataFixtures.xmp(creator: "Ann Example")
        let image = CodecTests.gradient(width: 32, height: 24)
        for lossless in [true, false] {
            let encoder = JXLEncoder(lossless: lossless, metadata: ImageMetadata(exif: exif, xmp: xmp, iccProfile: profile))
            let data = try encoder.encode(image)
            #expect(try JXLDecoder().decode(data, options: options).size == image.size)
            #expect(try Self.originalICCProfile(of: data) == profile, "lossless: \(lossless)")
            #expect(data.range(of: Data(count: 4) + exif) != nil)
            #expect(data.range(of: xmp) != nil)
        }
        // A profile libjxl cannot read is a typed error.
        #expect(throws: ImageEncodingError.self) {
            try JXLEncoder(metadata: ImageMetadata(iccProfile: MetadataFixtures.iccProfile(size: 300))).encode(image)
        }
    }

    /// The profile libjxl's decoder reports as the image's original one.
    static func originalICCProfile(of data: Data) throws -> Data? {
        guard let decoder = JxlDecoderCreate(nil) else { return nil }
        defer { JxlDecoderDestroy(decoder) }
        let bytes = [UInt8](data)
        return bytes.withUnsafeBufferPointer { input -> Data? in
            guard JxlDecoderSubscribeEvents(decoder, Int32(JXL_DEC_COLOR_ENCODING.rawValue)) == JXL_DEC_SUCCESS,
                JxlDecoderSetInput(decoder, input.baseAddress, input.count) == JXL_DEC_SUCCESS
            else { return nil }
            JxlDecoderCloseInput(decoder)
            guard JxlDecoderProcessInput(decoder) == JXL_DEC_COLOR_ENCODING else { return nil }
            var size = 0
            guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &size) == JXL_DEC_SUCCESS else { return nil }
            var profile = [UInt8](repeating: 0, count: size)
            let status = profile.withUnsafeMutableBufferPointer { buffer in
                JxlDecoderGetColorAsICCProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, buffer.baseAddress, size)
            }
            return status == JXL_DEC_SUCCESS ? Data(profile) : nil
        }
    }

    /// A small valid ICC v2 display profile: sRGB's primaries (adapted to
    /// D50) with a 2.2 gamma curve, so that libjxl has one it can parse.
    static func rgbProfile() -> Data {
        func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        func s15(_ value: Double) -> [UInt8] { u32(UInt32(bitPattern: Int32((value * 65536).rounded()))) }
        func xyz(_ x: Double, _ y: Double, _ z: Double) -> [UInt8] { Array("XYZ ".utf8) + u32(0) + s15(x) + s15(y) + s15(z) }
        // 'curv' with one entry: a gamma of 2.2 in u8Fixed8, padded to four bytes.
        let curve = Array("curv".utf8) + u32(0) + u32(1) + [0x02, 0x33, 0, 0]
        let tags: [(String, [UInt8])] = [
            ("wtpt", xyz(0.9642, 1.0, 0.8249)), ("rXYZ", xyz(0.4361, 0.2225, 0.0139)), ("gXYZ", xyz(0.3851, 0.7169, 0.0971)),
            ("bXYZ", xyz(0.1431, 0.0606, 0.7141)), ("rTRC", curve), ("gTRC", curve), ("bTRC", curve),
        ]
        var table: [UInt8] = u32(UInt32(tags.count))
        var contents: [UInt8] = []
        let start = 128 + 4 + 12 * tags.count
        for (signature, data) in tags {
            table += Array(signature.utf8) + u32(UInt32(start + contents.count)) + u32(UInt32(data.count))
            contents += data
        }
        var header = [UInt8](repeating: 0, count: 128)
        let fields: [(Int, [UInt8])] = [
            (0, u32(UInt32(128 + table.count + contents.count))), (8, [2, 0x10, 0, 0]), (12, Array("mntr".utf8)),
            (16, Array("RGB ".utf8)), (20, Array("XYZ ".utf8)), (36, Array("acsp".utf8)),
            (68, s15(0.9642) + s15(1.0) + s15(0.8249)),
        ]
        for (offset, bytes) in fields { header.replaceSubrange(offset..<(offset + bytes.count), with: bytes) }
        return Data(header + table + contents)
    }
}
