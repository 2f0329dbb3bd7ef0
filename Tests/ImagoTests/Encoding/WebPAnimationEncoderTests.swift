import Foundation
import ImagoCodecFixtures
import Testing

@testable import ImagoCodecs

@Suite("Animated WebP encoder: lossless and lossy, durations, loop count, metadata; read back by WebPDecoder and webpmux")
struct WebPAnimationEncoderTests {
    let options = ImageDecodingOptions()

    /// webpmux's `-info` table: one row per frame, its duration the seventh column.
    static func durations(inWebPMuxInfo info: String) -> [Int] {
        info.split(separator: "\n").compactMap { line in
            let columns = line.split(separator: " ")
            guard columns.count >= 7, columns[0].hasSuffix(":"), Int(columns[0].dropLast()) != nil else { return nil }
            return Int(columns[6])
        }
    }

    @Test("a lossless animation comes back exactly, with its durations and loop count; webpmux reads the same")
    func losslessRoundTrip() throws {
        // Given four frames of a square moving over nothing
        let frames = AnimationSamples.movingSquare(frameCount: 4, transparent: true)
        let durations = [0.1, 0.25, 0.07, 0.5]
        // When they are written as a lossless WebP that plays three times
        let data = try WebPEncoder(lossless: true).encode(frames: frames, durations: durations, loopCount: 3)
        #expect(ImageFormat(sniffing: data) == .webp)
        // Then WebPDecoder gives back every frame exactly
        let image = try WebPDecoder().decode(data, options: options)
        let animation = try #require(image.animation)
        #expect(animation.frameDurations == durations)
        #expect(animation.loopCount == 3)
        let decoded = try AnimationSamples.frames(of: image)
        #expect(decoded.count == 4)
        for (index, (actual, expected)) in zip(decoded, frames).enumerated() {
            #expect(AnimationSamples.sameRGBA(actual, expected), "frame \(index)")
        }
        // And webpmux sees four frames, their durations in milliseconds and the loop count
        let info = try CommandLineTool.webpmux.output(["-info"], on: data, fileExtension: "webp")
        #expect(info.contains("Canvas size: 48 x 32"), "\(info)")
        #expect(info.contains("Number of frames: 4"), "\(info)")
        #expect(info.contains("Loop Count : 3"), "\(info)")
        #expect(Self.durations(inWebPMuxInfo: info) == [100, 250, 70, 500], "\(info)")
    }

    @Test("a lossy animation at a quality stays close; durations round to milliseconds keeping the running time")
    func lossy() throws {
        let frames = AnimationSamples.photoFrames(frameCount: 3)
        let data = try WebPEncoder(quality: 90).encode(frames: frames, durations: [1.0 / 3, 1.0 / 3, 1.0 / 3], loopCount: 0)
        let image = try WebPDecoder().decode(data, options: options)
        #expect(image.animation?.frameDurations == [0.333, 0.334, 0.333])
        #expect(image.animation?.loopCount == 0)
        let decoded = try AnimationSamples.frames(of: image)
        #expect(decoded.count == 3)
        for (index, (actual, expected)) in zip(decoded, frames).enumerated() {
            let error = AnimationSamples.meanColorError(actual, expected)
            #expect(error < 3, "frame \(index): mean error \(error)")
        }
        let info = try CommandLineTool.webpmux.output(["-info"], on: data, fileExtension: "webp")
        #expect(info.contains("Loop Count : 0"), "\(info)")
        #expect(info.contains("lossy"), "\(info)")
        #expect(Self.durations(inWebPMuxInfo: info) == [333, 334, 333], "\(info)")
    }

    @Test("the metadata (ICC, EXIF, XMP) goes into the animation's chunks")
    func metadata() throws {
        let metadata = ImageMetadata(
            exif: MetadataFixtures.exif(orientation: 1), xmp: MetadataFixtures.xmp(creator: "Ann Example"),
            iccProfile: MetadataFixtures.iccProfile(size: 600))
        let frames = AnimationSamples.movingSquare(frameCount: 2)
        let data = try WebPEncoder(lossless: true, metadata: metadata).encode(frames: frames, durations: [0.1, 0.1], loopCount: 0)
        #expect(ImageMetadata(reading: data) == metadata)
        #expect(try WebPDecoder().decode(data, options: options).animation?.frameCount == 2)
        let info = try CommandLineTool.webpmux.output(["-info"], on: data, fileExtension: "webp")
        for feature in ["animation", "ICC profile", "EXIF metadata", "XMP metadata"] { #expect(info.contains(feature), "\(info)") }
    }

    @Test("gray frames and frames without alpha are written as colour")
    func pixelFormats() throws {
        let gray = CodecTests.gradient(width: 20, height: 10, format: .gray8)
        let rgb = CodecTests.gradient(width: 20, height: 10, format: .rgb8)
        let data = try WebPEncoder(lossless: true).encode(frames: [gray, rgb], durations: [0.1, 0.1], loopCount: 0)
        let decoded = try AnimationSamples.frames(of: try WebPDecoder().decode(data, options: options))
        #expect(decoded.count == 2)
        #expect(AnimationSamples.sameRGBA(decoded[0], gray))
        #expect(AnimationSamples.sameRGBA(decoded[1], rgb))
    }
}
