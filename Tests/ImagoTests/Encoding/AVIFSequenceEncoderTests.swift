import Foundation
import Testing

@testable import ImagoCodecs

@Suite("AVIF sequence encoder: frames and durations read back by AVIFDecoder; what libavif 0.11 cannot write")
struct AVIFSequenceEncoderTests {
    let options = ImageDecodingOptions()

    @Test("a sequence comes back with its frames close, its durations, playing forever")
    func roundTrip() throws {
        // Given three frames of a square moving over a flat background
        let frames = AnimationSamples.movingSquare(frameCount: 3)
        let durations = [0.1, 0.25, 0.07]
        // When they are written as an AVIF sequence
        let data = try AVIFEncoder(quality: 80).encode(frames: frames, durations: durations, loopCount: 0)
        #expect(ImageFormat(sniffing: data) == .avif)
        // Then AVIFDecoder reads three frames of that size, with their durations
        let image = try AVIFDecoder().decode(data, options: options)
        let animation = try #require(image.animation)
        #expect(animation.frameCount == 3)
        #expect(animation.frameDurations == durations)
        #expect(animation.loopCount == 0)
        #expect(animation.frameSize == ImageSize(width: 48, height: 32))
        let decoded = try AnimationSamples.frames(of: image)
        #expect(decoded.count == 3)
        for (index, (actual, expected)) in zip(decoded, frames).enumerated() {
            let error = AnimationSamples.meanColorError(actual, expected)
            #expect(error < 6, "frame \(index): mean error \(error)")
            // The square is where this frame put it.
            let center = PixelFixtures.rgba(actual, index * 8 + 8, 16)
            let wanted = PixelFixtures.rgba(expected, index * 8 + 8, 16)
            #expect(zip(center, wanted).allSatisfy { abs(Int($0) - Int($1)) <= 24 }, "frame \(index): \(center) for \(wanted)")
        }
    }

    @Test("alpha: kept through the sequence when the first frame has it; a later frame with alpha after one without is an error")
    func alpha() throws {
        let transparent = AnimationSamples.movingSquare(frameCount: 2, transparent: true)
        let opaque = AnimationSamples.movingSquare(frameCount: 2).map { frame in
            Image(width: frame.width, height: frame.height, pixelFormat: .rgb8, pixels: PixelFixtures.pixels(frame).flatMap { $0.prefix(3) })!
        }
        let data = try AVIFEncoder(quality: 90).encode(frames: [transparent[0], opaque[1]], durations: [0.1, 0.1], loopCount: 0)
        let decoded = try AnimationSamples.frames(of: try AVIFDecoder().decode(data, options: options))
        #expect(decoded.count == 2)
        #expect(PixelFixtures.rgba(decoded[0], 40, 2)[3] == 0)
        #expect(PixelFixtures.rgba(decoded[1], 40, 2)[3] == 255)
        #expect(throws: ImageEncodingError.self) {
            try AVIFEncoder().encode(frames: [opaque[0], transparent[1]], durations: [0.1, 0.1], loopCount: 0)
        }
    }

    @Test("a loop count other than forever is refused: libavif 0.11 has no repetitionCount and writes no edit list")
    func loopCount() throws {
        for loopCount in [1, 2, 100] {
            let error = #expect(throws: ImageEncodingError.self) {
                try AVIFEncoder().animationWriter(frameSize: ImageSize(width: 8, height: 8), loopCount: loopCount)
            }
            #expect(error?.detail.contains("libavif 0.11") == true)
        }
    }
}
