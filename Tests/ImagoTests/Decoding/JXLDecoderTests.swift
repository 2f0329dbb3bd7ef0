import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("JPEG XL: every layout, orientation, limits, damaged input")
struct JXLDecoderTests {
    let options = ImageDecodingOptions()

    @Test("lossless JPEG XL decodes exactly, gray and colour, with and without alpha, bare or in its container")
    func roundTrips() throws {
        for format in [Image.PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8] {
            let image = CodecTests.gradient(width: 67, height: 41, format: format)
            for container in [false, true] {
                let data = try FormatFixtures.jxl(image, container: container)
                #expect(ImageFormat(sniffing: data) == .jxl)
                let decoded = try JXLDecoder().decode(data, options: options)
                #expect(decoded == image, "\(format), container: \(container)")
            }
        }
    }

    @Test("the header's orientation is applied, and a target size to the upright image")
    func orientation() throws {
        // Orientation 6: shown turned a quarter clockwise.
        let data = try FormatFixtures.jxl(FormatFixtures.quadrants(), orientation: 6)
        let image = try JXLDecoder().decode(data, options: options)
        #expect(image.size == ImageSize(width: 48, height: 64))
        #expect(image == ImageOrientation.right.apply(to: FormatFixtures.quadrants()))
        let small = try JXLDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 24, height: 32)))
        #expect(small.size == ImageSize(width: 24, height: 32))
    }

    @Test("the pipeline's default decoders include JPEG XL")
    func pipelineDecodes() throws {
        let data = try FormatFixtures.jxl(FormatFixtures.quadrants())
        let decoders = ImagePipeline.Configuration(trimsMemoryOnPressure: false).decoders
        let image = try ImagePipeline.decode(data, options: options, decoders: decoders)
        #expect(FormatFixtures.showsQuadrants(image, tolerance: 0))
    }

    @Test("a header declaring too many pixels is refused before decoding")
    func pixelLimit() throws {
        let data = try FormatFixtures.jxl(FormatFixtures.quadrants(width: 640, height: 480))
        let error = #expect(throws: ImageDecodingError.self) {
            _ = try JXLDecoder().decode(data, options: ImageDecodingOptions(maximumPixelCount: 300_000))
        }
        #expect(error?.code == .tooManyPixels(width: 640, height: 480, limit: 300_000))
    }

    @Test("truncated and bit-flipped JPEG XL gives an image or a decoding error, never a crash")
    func damagedInput() throws {
        let original = try FormatFixtures.jxl(CodecTests.gradient(width: 64, height: 48, format: .rgba8))
        var generator = SeededGenerator(seed: 11)
        var variants = stride(from: 0, to: original.count, by: max(1, original.count / 60)).map { Data(original.prefix($0)) }
        for _ in 0..<200 {
            var copy = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                copy[Int.random(in: 0..<copy.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            }
            variants.append(copy)
        }
        var rejected = 0
        for variant in variants {
            do {
                let image = try JXLDecoder().decode(variant, options: options)
                #expect(image.pixels.count == image.bytesPerRow * image.height)
            } catch {
                #expect(error.format == .jxl)
                rejected += 1
            }
        }
        #expect(rejected > 0)
        let truncated = #expect(throws: ImageDecodingError.self) {
            _ = try JXLDecoder().decode(original.prefix(original.count / 2), options: options)
        }
        #expect(truncated?.detail == "truncated data")
    }
}
