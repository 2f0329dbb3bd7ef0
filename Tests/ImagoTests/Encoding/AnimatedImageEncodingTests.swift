import Foundation
import Testing

@testable import ImagoCodecs

@Suite("Animated encoders: bad input is a typed error, never a trap; the timeline keeps the running time")
struct AnimatedImageEncodingTests {
    static let encoders: [any AnimatedImageEncoding] = [GIFEncoder(), WebPEncoder(quality: 70), WebPEncoder(lossless: true), AVIFEncoder()]
    static let frame = AnimationSamples.movingSquare(frameCount: 1)[0]

    /// Whether `body` throws an ``ImageEncodingError`` for `format`.
    static func fails(_ format: ImageFormat, _ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch let error as ImageEncodingError {
            return error.format == format
        } catch {
            return false
        }
    }

    @Test("no frames, frames of another size, durations negative, NaN or infinite, or not one per frame", arguments: encoders)
    func badInput(encoder: any AnimatedImageEncoding) throws {
        let format = encoder.format
        let other = AnimationSamples.movingSquare(frameCount: 1, width: 40)[0]
        #expect(Self.fails(format) { _ = try encoder.encode(frames: [], durations: [], loopCount: 0) })
        #expect(Self.fails(format) { _ = try encoder.encode(frames: [Self.frame, other], durations: [0.1, 0.1], loopCount: 0) })
        #expect(Self.fails(format) { _ = try encoder.encode(frames: [Self.frame], durations: [0.1, 0.1], loopCount: 0) })
        for duration in [-0.1, -.infinity, .infinity, .nan, -.nan] {
            #expect(Self.fails(format) { _ = try encoder.encode(frames: [Self.frame], durations: [duration], loopCount: 0) }, "\(duration)")
        }
        #expect(Self.fails(format) { _ = try encoder.encode(frames: [Self.frame], durations: [0.1], loopCount: -1) })
        for size in [ImageSize(width: 0, height: 10), ImageSize(width: 10, height: -1), ImageSize(width: 1 << 20, height: 1)] {
            #expect(Self.fails(format) { _ = try encoder.animationWriter(frameSize: size, loopCount: 0) }, "\(size)")
        }
    }

    @Test("a writer that finished, failed, or has no frames refuses every call", arguments: encoders)
    func writerStates(encoder: any AnimatedImageEncoding) throws {
        let format = encoder.format
        let empty = try encoder.animationWriter(frameSize: Self.frame.size, loopCount: 0)
        #expect(Self.fails(format) { _ = try empty.finish() })
        #expect(Self.fails(format) { try empty.addFrame(Self.frame, duration: 0.1) })

        let finished = try encoder.animationWriter(frameSize: Self.frame.size, loopCount: 0)
        try finished.addFrame(Self.frame, duration: 0.1)
        #expect(finished.frameCount == 1)
        #expect(!(try finished.finish()).isEmpty)
        #expect(Self.fails(format) { _ = try finished.finish() })
        #expect(Self.fails(format) { try finished.addFrame(Self.frame, duration: 0.1) })

        let failed = try encoder.animationWriter(frameSize: Self.frame.size, loopCount: 0)
        try failed.addFrame(Self.frame, duration: 0.1)
        #expect(Self.fails(format) { try failed.addFrame(Self.frame, duration: .nan) })
        #expect(Self.fails(format) { _ = try failed.finish() })
    }

    @Test("each frame ends at the tick nearest to the durations' sum, no shorter than the minimum, no longer than the maximum")
    func timeline() {
        var milliseconds = AnimationTimeline(ticksPerSecond: 1000, minimumTicks: 11, maximumTicks: 0xFF_FFFF)
        let thirds: [Double] = [1.0 / 3, 1.0 / 3, 1.0 / 3]
        let thirdTicks = thirds.map { milliseconds.ticks(for: $0) }
        #expect(thirdTicks == [333, 334, 333])
        #expect(milliseconds.elapsedTicks == 1000)
        var centiseconds = AnimationTimeline(ticksPerSecond: 100, minimumTicks: 2, maximumTicks: 0xFFFF)
        let short: [Double] = [0, 0, 0.1]
        let shortTicks = short.map { centiseconds.ticks(for: $0) }
        #expect(shortTicks == [2, 2, 6])
        #expect(centiseconds.ticks(for: 1e300) == 0xFFFF)
        #expect(centiseconds.ticks(for: 0.1) == 10)
    }
}
