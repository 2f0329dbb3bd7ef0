import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("WebP: lossy, lossless, alpha, scaled decoding, animation, damaged input")
struct WebPDecoderTests {
    let options = ImageDecodingOptions()

    @Test("lossy RGB and lossless RGBA decode to the pixels encoded")
    func stills() throws {
        let lossy = try WebPEncoder(quality: 90).encode(FormatFixtures.quadrants())
        #expect(ImageFormat(sniffing: lossy) == .webp)
        let decodedLossy = try WebPDecoder().decode(lossy, options: options)
        #expect(decodedLossy.size == ImageSize(width: 64, height: 48))
        #expect(decodedLossy.pixelFormat == .rgb8)
        #expect(FormatFixtures.showsQuadrants(decodedLossy))

        let withAlpha = FormatFixtures.quadrants(alpha: true)
        let lossless = try WebPEncoder(lossless: true).encode(withAlpha)
        let decodedLossless = try WebPDecoder().decode(lossless, options: options)
        #expect(decodedLossless == withAlpha)
        #expect(decodedLossless.animation == nil)
    }

    @Test("WebPEncoder: lossless round trips are exact in every pixel format (gray comes back as RGB); lossy stays close")
    func encoder() throws {
        for format in [Image.PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8] {
            let image = CodecTests.gradient(width: 37, height: 21, format: format)
            let data = try WebPEncoder(lossless: true).encode(image)
            #expect(ImageFormat(sniffing: data) == .webp)
            let decoded = try WebPDecoder().decode(data, options: options)
            #expect(decoded.size == image.size)
            for (x, y) in [(0, 0), (36, 20), (18, 10), (5, 17)] {
                let expected = FormatFixtures.rgba(image, x: x, y: y)
                let actual = FormatFixtures.rgba(decoded, x: x, y: y)
                // libwebp drops the colour of fully transparent pixels: only alpha is kept there.
                #expect(expected[3] == 0 ? actual[3] == 0 : actual == expected, "\(format) at (\(x), \(y))")
            }
        }
        let photo = CodecTests.gradient(width: 160, height: 120)
        let lossy = try WebPDecoder().decode(try WebPEncoder(quality: 90).encode(photo), options: options)
        #expect(CodecTests.meanAbsoluteError(lossy, photo) < 3)
        #expect(throws: ImageEncodingError.self) {
            try WebPEncoder().encode(Image(width: 20_000, height: 1, pixelFormat: .gray8, pixels: [UInt8](repeating: 0, count: 20_000))!)
        }
    }

    @Test("a target size is decoded straight to the output size, filling or fitting")
    func scaledDecoding() throws {
        let data = try WebPEncoder(quality: 90).encode(FormatFixtures.quadrants(width: 400, height: 300))
        let target = ImageSize(width: 100, height: 100)
        let filled = try WebPDecoder().decode(data, options: ImageDecodingOptions(targetSize: target, contentMode: .fill))
        #expect(filled.size == ImageSize(width: 133, height: 100))
        #expect(FormatFixtures.showsQuadrants(filled))
        let fitted = try WebPDecoder().decode(data, options: ImageDecodingOptions(targetSize: target, contentMode: .fit))
        #expect(fitted.size == ImageSize(width: 100, height: 75))
        let unscaled = try WebPDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 800, height: 800)))
        #expect(unscaled.size == ImageSize(width: 400, height: 300))
    }

    @Test("an animation decodes frame by frame, composited, with its durations and loop count")
    func animation() throws {
        let frames = [(UInt8(255), UInt8(0)), (0, 255), (40, 40)].map { red, green in
            Image(width: 16, height: 8, pixelFormat: .rgba8, pixels: Array((0..<(16 * 8)).map { _ in [red, green, 0, 255] }.joined()))!
        }
        let data = try FormatFixtures.animatedWebP(frames, durationMS: 70, loopCount: 3)
        let first = try WebPDecoder().decode(data, options: options)
        #expect(first.pixels == frames[0].pixels)
        let animation = try #require(first.animation)
        #expect(animation.frameCount == 3)
        #expect(animation.loopCount == 3)
        #expect(animation.frameDurations == [0.07, 0.07, 0.07])
        for _ in 0..<2 {  // every pass starts again from the first frame
            let pass = try animation.frames()
            var decoded: [Image] = []
            while let frame = try pass.next() { decoded.append(frame) }
            #expect(decoded == frames)
        }
        #expect(first.cost == 16 * 8 * 4 + data.count)
    }

    @Test("animation frames are scaled to the target size like the first one")
    func scaledAnimation() throws {
        // Different frames: the encoder merges identical ones.
        let frames = [
            FormatFixtures.quadrants(width: 64, height: 48, alpha: true),
            Image(width: 64, height: 48, pixelFormat: .rgba8, pixels: [UInt8](repeating: 90, count: 64 * 48 * 4))!,
        ]
        let data = try FormatFixtures.animatedWebP(frames, durationMS: 5, loopCount: 0)
        let first = try WebPDecoder().decode(data, options: ImageDecodingOptions(targetSize: ImageSize(width: 16, height: 16), contentMode: .fit))
        let animation = try #require(first.animation)
        #expect(animation.frameSize == ImageSize(width: 16, height: 12))
        #expect(animation.frameDurations == [0.1, 0.1], "5 ms is shown as 100 ms")
        let pass = try animation.frames()
        while let frame = try pass.next() { #expect(frame.size == ImageSize(width: 16, height: 12)) }
    }

    @Test("more frames than allowed are refused")
    func frameLimit() throws {
        let frames = (0..<5).map { index in
            Image(width: 4, height: 4, pixelFormat: .rgba8, pixels: [UInt8](repeating: UInt8(index * 50), count: 64))!
        }
        let data = try FormatFixtures.animatedWebP(frames, durationMS: 100, loopCount: 0)
        let error = #expect(throws: ImageDecodingError.self) {
            try WebPDecoder().decode(data, options: ImageDecodingOptions(maximumFrameCount: 4))
        }
        #expect(error?.code == .tooManyFrames(count: 5, limit: 4))
    }

    @Test("headers declaring too many pixels are refused before decoding, still or animated")
    func pixelLimit() throws {
        // VP8L header: signature 0x2f, then 14 bits width-1 and 14 bits height-1 (16384 each).
        let lossless = Self.riff(chunk: "VP8L", payload: [0x2F, 0xFF, 0xFF, 0xFF, 0x0F] + [UInt8](repeating: 0, count: 8))
        // VP8X with the animation flag and a 16384x16384 canvas.
        let animated = Self.riff(chunk: "VP8X", payload: [0x02, 0, 0, 0, 0xFF, 0x3F, 0x00, 0xFF, 0x3F, 0x00])
        for data in [lossless, animated] {
            let error = #expect(throws: ImageDecodingError.self) { try WebPDecoder().decode(data, options: options) }
            #expect(error?.code == .tooManyPixels(width: 16384, height: 16384, limit: 100_000_000))
        }
    }

    @Test("truncated, bit-flipped and garbage WebP data give decoding errors, never a crash")
    func damagedInput() throws {
        let still = try WebPEncoder(lossless: true).encode(FormatFixtures.quadrants())
        let animated = try FormatFixtures.animatedWebP(
            [FormatFixtures.quadrants(alpha: true), FormatFixtures.quadrants(alpha: true)], durationMS: 50, loopCount: 0)
        for data in [still, animated] {
            for length in stride(from: 0, to: data.count, by: max(1, data.count / 40)) {
                #expect(throws: ImageDecodingError.self) { try WebPDecoder().decode(data.prefix(length), options: options) }
            }
            var generator = SeededGenerator(seed: 7)
            for _ in 0..<200 {
                var damaged = data
                let index = Int.random(in: 12..<damaged.count, using: &generator)
                damaged[index] ^= UInt8.random(in: 1...255, using: &generator)
                // Either outcome is fine; the process must survive and every frame must decode or throw.
                if let image = try? WebPDecoder().decode(damaged, options: options), let animation = image.animation {
                    let pass = try? animation.frames()
                    while (try? pass?.next()) != nil {}
                }
            }
        }
    }

    static func riff(chunk: String, payload: [UInt8]) -> Data {
        var body = Data("WEBP".utf8) + Data(chunk.utf8)
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { body.append(contentsOf: $0) }
        body.append(contentsOf: payload)
        var data = Data("RIFF".utf8)
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { data.append(contentsOf: $0) }
        return data + body
    }
}
