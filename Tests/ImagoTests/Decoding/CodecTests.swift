import CTurboJPEG
import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("JPEG and PNG codecs: round trips, scaled decoding, limits, damaged input")
struct CodecTests {
    /// A smooth picture: gradients compress well and survive JPEG closely.
    static func gradient(width: Int, height: Int, format: Image.PixelFormat = .rgb8) -> Image {
        let channels = format.bytesPerPixel
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                let base = (y * width + x) * channels
                let values = [UInt8(x * 255 / max(1, width - 1)), UInt8(y * 255 / max(1, height - 1)), 128, UInt8((x + y) % 256)]
                switch format {
                case .gray8: pixels[base] = values[0]
                case .grayAlpha8:
                    pixels[base] = values[0]
                    pixels[base + 1] = values[3]
                case .rgb8: for c in 0..<3 { pixels[base + c] = values[c] }
                case .rgba8: for c in 0..<4 { pixels[base + c] = values[c] }
                }
            }
        }
        return Image(width: width, height: height, pixelFormat: format, pixels: pixels)!
    }

    static func meanAbsoluteError(_ a: Image, _ b: Image) -> Double {
        zip(a.pixels, b.pixels).reduce(0.0) { $0 + Double(abs(Int($1.0) - Int($1.1))) } / Double(a.pixels.count)
    }

    @Test("PNG round trips are exact in every pixel format", arguments: [Image.PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8])
    func pngRoundTrip(format: Image.PixelFormat) throws {
        let image = Self.gradient(width: 97, height: 61, format: format)
        let data = try PNGEncoder().encode(image)
        #expect(ImageFormat(sniffing: data) == .png)
        let decoded = try PNGDecoder().decode(data, options: ImageDecodingOptions())
        #expect(decoded == image)
    }

    @Test("PNG thumbnails streamed row by row equal the whole image resampled", arguments: [Image.PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8])
    func pngStreamedThumbnail(format: Image.PixelFormat) throws {
        let image = Self.gradient(width: 301, height: 203, format: format)
        let data = try PNGEncoder().encode(image)
        for (target, mode) in [(ImageSize(width: 64, height: 64), ContentMode.fit), (ImageSize(width: 100, height: 30), .fill)] {
            let options = ImageDecodingOptions(targetSize: target, contentMode: mode)
            let streamed = try PNGDecoder().decode(data, options: options)
            let whole = try #require(ImageResizer.resize(image, to: options.outputSize(for: image.size)))
            #expect(streamed == whole, "\(format) \(target) \(mode)")
        }
        // A stream cut short in the image data is an error, never a partial image.
        let truncated = data.prefix(data.count / 2)
        #expect(throws: ImageDecodingError.self) {
            _ = try PNGDecoder().decode(truncated, options: ImageDecodingOptions(targetSize: ImageSize(width: 32, height: 32)))
        }
    }

    @Test("JPEG round trips stay close, in color and gray")
    func jpegRoundTrip() throws {
        for format in [Image.PixelFormat.rgb8, .gray8] {
            let image = Self.gradient(width: 160, height: 120, format: format)
            let data = try JPEGEncoder(quality: 90).encode(image)
            #expect(ImageFormat(sniffing: data) == .jpeg)
            let decoded = try JPEGDecoder().decode(data, options: ImageDecodingOptions())
            #expect(decoded.pixelFormat == format)
            #expect(decoded.width == 160 && decoded.height == 120)
            #expect(Self.meanAbsoluteError(decoded, image) < 2.5, "\(format)")
        }
    }

    @Test("JPEG decodes in the DCT domain at the smallest scale that covers the target")
    func dctScaling() throws {
        let photo = try JPEGEncoder(quality: 80).encode(Self.gradient(width: 4000, height: 3000))
        let cases: [(ImageSize?, Int, Int)] = [
            (ImageSize(width: 256, height: 256), 500, 375),  // 1/8
            (ImageSize(width: 600, height: 400), 1000, 750),  // 1/4 covers 600 wide
            (ImageSize(width: 1900, height: 1000), 2000, 1500),  // 1/2
            (ImageSize(width: 5000, height: 5000), 4000, 3000),  // never enlarged
            (nil, 4000, 3000),
        ]
        for (target, width, height) in cases {
            let image = try JPEGDecoder().decode(photo, options: ImageDecodingOptions(targetSize: target))
            #expect(image.width == width && image.height == height, "\(String(describing: target))")
        }
        // Fitting 1000x300 shows the image at 400x300: 1/8 covers it (filling would need 1/4).
        let fit = ImageDecodingOptions(targetSize: ImageSize(width: 1000, height: 300), contentMode: .fit)
        #expect(try JPEGDecoder().decode(photo, options: fit).size == ImageSize(width: 500, height: 375))
        // 1024x768 fitting 256x256 decodes at 1/4, exactly the output size.
        let small = try JPEGEncoder(quality: 80).encode(Self.gradient(width: 1024, height: 768))
        let thumbnail = ImageDecodingOptions(targetSize: ImageSize(width: 256, height: 256), contentMode: .fit)
        #expect(try JPEGDecoder().decode(small, options: thumbnail).size == ImageSize(width: 256, height: 192))
    }

    @Test("headers declaring too many pixels are refused before decoding")
    func pixelLimit() throws {
        // A PNG whose IHDR says 60000x60000: header only, with a correct CRC.
        let png = PNGChunks.signature + PNGChunks.chunk("IHDR", PNGChunks.header(width: 60000, height: 60000, bitDepth: 8, colorType: 2))

        // A JPEG whose SOF0 says 60000x60000.
        var jpeg = try JPEGEncoder().encode(Self.gradient(width: 16, height: 16))
        let sof = try #require(jpeg.indices.first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        for (offset, byte) in [UInt8(0xEA), 0x60, 0xEA, 0x60].enumerated() { jpeg[sof + 5 + offset] = byte }

        for (data, format) in [(png, ImageFormat.png), (jpeg, .jpeg)] {
            // Refused from the header: decoding 3.6 gigapixels would fail otherwise, or not at all.
            let error = #expect(throws: ImageDecodingError.self) {
                _ = try ImagePipeline.decode(data, options: ImageDecodingOptions(), decoders: [JPEGDecoder(), PNGDecoder()])
            }
            #expect(error?.code == .tooManyPixels(width: 60000, height: 60000, limit: 100_000_000), "\(format)")
        }
    }

    @Test("unknown data is described: empty, HTML, JSON, bytes")
    func unknownData() {
        let cases: [(Data, String)] = [
            (Data(), "empty data"),
            (Data("<!DOCTYPE html><html>".utf8), "HTML, not an image"),
            (Data("{\"error\": 1}".utf8), "JSON, not an image"),
            (Data([1, 2, 3, 4, 5, 6, 7, 8, 9]), "9 bytes starting 01 02 03 04 05 06 07 08"),
        ]
        for (data, description) in cases {
            let error = #expect(throws: ImageDecodingError.self) {
                _ = try ImagePipeline.decode(data, options: ImageDecodingOptions(), decoders: [JPEGDecoder(), PNGDecoder()])
            }
            #expect(error?.code == .unsupportedFormat(seen: description))
        }
    }

    @Test("truncated and bit-flipped files never crash: each gives an image or a decoding error")
    func damagedInput() throws {
        let originals = [
            try JPEGEncoder().encode(Self.gradient(width: 64, height: 48)),
            try PNGEncoder().encode(Self.gradient(width: 64, height: 48, format: .rgba8)),
        ]
        var generator = SeededGenerator(seed: 7)
        var decoded = 0
        var rejected = 0
        for original in originals {
            var variants = stride(from: 0, to: original.count, by: 7).map { original.prefix($0) }
            for _ in 0..<300 {
                var copy = original
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    copy[Int.random(in: 0..<copy.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                }
                variants.append(copy)
            }
            for variant in variants {
                do {
                    let image = try ImagePipeline.decode(Data(variant), options: ImageDecodingOptions(), decoders: [JPEGDecoder(), PNGDecoder()])
                    #expect(image.pixels.count == image.bytesPerRow * image.height)
                    decoded += 1
                } catch {
                    rejected += 1
                }
            }
        }
        #expect(decoded > 0 && rejected > 0)
    }
}

@Suite("JPEG: CMYK")
struct CMYKJPEGTests {
    @Test("CMYK JPEGs decode to RGB with Adobe's inverted convention (255 = no ink)")
    func cmyk() throws {
        // Given a 16x8 CMYK JPEG, left half no ink at all, right half full cyan, written by TurboJPEG
        let width = 16
        let height = 8
        var cmyk = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in (width / 2)..<width { cmyk[(y * width + x) * 4] = 0 }
        }
        let handle = try #require(tjInitCompress())
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = cmyk.withUnsafeBufferPointer {
            tjCompress2(
                handle, $0.baseAddress, Int32(width), 0, Int32(height), TJPF_CMYK.rawValue, &output, &size,
                Int32(TJSAMP_444.rawValue), 95, 0)
        }
        defer { tjFree(output) }
        try #require(status == 0)
        let data = Data(bytes: try #require(output), count: Int(size))

        // When it is decoded
        let image = try JPEGDecoder().decode(data, options: ImageDecodingOptions())

        // Then it is RGB: white on the left, cyan on the right
        #expect(image.pixelFormat == .rgb8)
        func pixel(_ x: Int, _ y: Int) -> [Int] { (0..<3).map { Int(image.pixels[(y * width + x) * 3 + $0]) } }
        #expect(pixel(2, 4).allSatisfy { $0 > 245 })
        let cyan = pixel(13, 4)
        #expect(cyan[0] < 10 && cyan[1] > 245 && cyan[2] > 245, "\(cyan)")
    }
}

@Suite("JPEG: progressive and 12-bit")
struct JPEGVariantTests {
    @Test("progressive JPEGs decode like baseline ones, scaled too")
    func progressive() throws {
        let image = CodecTests.gradient(width: 96, height: 64)
        let handle = try #require(tjInitCompress())
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = image.pixels.withUnsafeBufferPointer {
            tjCompress2(handle, $0.baseAddress, 96, 0, 64, TJPF_RGB.rawValue, &output, &size, Int32(TJSAMP_420.rawValue), 90, TJFLAG_PROGRESSIVE)
        }
        defer { tjFree(output) }
        try #require(status == 0)
        let data = Data(bytes: try #require(output), count: Int(size))
        #expect(data.contains(0xC2), "an SOF2 (progressive) marker")
        let decoded = try JPEGDecoder().decode(data, options: ImageDecodingOptions())
        #expect(CodecTests.meanAbsoluteError(decoded, image) < 3)
        let scaled = try JPEGDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 12, height: 8)))
        #expect(scaled.size == ImageSize(width: 12, height: 8))
    }

    @Test("a 12-bit JPEG, which TurboJPEG cannot decode, is a decoding error, not a crash")
    func twelveBit() throws {
        var jpeg = try JPEGEncoder().encode(CodecTests.gradient(width: 16, height: 16))
        let sof = try #require(jpeg.indices.first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg[sof + 1] = 0xC1  // extended sequential, which allows 12 bits
        jpeg[sof + 4] = 12  // sample precision
        let error = #expect(throws: ImageDecodingError.self) { try JPEGDecoder().decode(jpeg, options: ImageDecodingOptions()) }
        #expect(error?.code == .corrupt)
    }
}
