import CAvif
import Foundation

/// AVIF image sequences through libavif's `avifEncoderAddImage`, at the
/// encoder's quality and speed, alpha kept.
///
/// ```swift
/// let bytes = try AVIFEncoder(quality: 60).encode(frames: frames, durations: durations, loopCount: 0)
/// ```
///
/// Durations are whole milliseconds (a 1000 Hz timescale), rounded so that
/// the running time stays close to the durations' sum; a frame lasts at
/// least 11 ms (browsers show 10 ms or less as 100 ms).
///
/// The loop count must be 0 (forever): libavif 0.11, Debian 12's, cannot
/// write any other. Its `avifEncoder` has no `repetitionCount` (libavif
/// 1.0.0 added it), and its `avifEncoderFinish` writes no edit list
/// (`edts`/`elst` box) in the sequence's track, which is where the number
/// of repetitions goes. A sequence without one plays forever in Chromium
/// ("loop infinitely for backward compatibility", its `avif_image_decoder.cc`)
/// and is read as forever by ``AVIFDecoder``.
///
/// The first frame decides whether the sequence has alpha (libavif 0.11
/// encodes an alpha track from its first image): later frames without
/// alpha are made opaque, and a later frame with alpha after a first one
/// without is an error rather than losing its transparency. The
/// ``AVIFEncoder/metadata`` goes with the first frame.
extension AVIFEncoder: AnimatedImageEncoding {
    public func animationWriter(frameSize: ImageSize, loopCount: Int) throws(ImageEncodingError) -> any AnimationWriting {
        try AVIFAnimationWriter(settings: self, frameSize: frameSize, loopCount: loopCount)
    }
}

/// One AVIF sequence, each frame encoded as it is added (libavif keeps the
/// encoded samples, not the frames).
final class AVIFAnimationWriter: AnimationWriting {
    let frameSize: ImageSize
    private(set) var frameCount = 0
    private let input: AnimationInput
    private let settings: AVIFEncoder
    /// Open until finished or failed.
    private var encoder: UnsafeMutablePointer<avifEncoder>?
    private var timeline = AnimationTimeline(ticksPerSecond: 1000, minimumTicks: 11, maximumTicks: Int(UInt32.max))
    /// Whether the sequence has an alpha track, once the first frame has said.
    private var hasAlpha: Bool?

    init(settings: AVIFEncoder, frameSize: ImageSize, loopCount: Int) throws(ImageEncodingError) {
        // A sequence's sample entry stores its size in 16 bits.
        input = try AnimationInput(format: .avif, frameSize: frameSize, loopCount: loopCount, maximumSide: 0xFFFF, maximumLoopCount: .max)
        guard loopCount == 0 else {
            throw ImageEncodingError(
                format: .avif,
                detail: "loop count \(loopCount): libavif 0.11 writes no loop count (no repetitionCount, no edit list), so a sequence plays forever")
        }
        self.frameSize = frameSize
        self.settings = settings
        let encoder = try settings.makeEncoder()
        encoder.pointee.timescale = UInt64(timeline.ticksPerSecond)
        self.encoder = encoder
    }

    deinit {
        if let encoder { avifEncoderDestroy(encoder) }
    }

    func addFrame(_ frame: Image, duration: Double) throws(ImageEncodingError) {
        guard let encoder else { throw input.closed }
        do throws(ImageEncodingError) {
            try input.check(frame, duration: duration, index: frameCount)
            let alpha = hasAlpha ?? frame.pixelFormat.hasAlpha
            if !alpha, frame.pixelFormat.hasAlpha {
                throw ImageEncodingError(
                    format: .avif, detail: "frame \(frameCount) has alpha but the first frame has none, so the sequence has no alpha track")
            }
            hasAlpha = alpha
            let image = try settings.makeAVIFImage(alpha ? frame.addingAlpha() : frame, withMetadata: frameCount == 0)
            defer { avifImageDestroy(image) }
            let ticks = timeline.ticks(for: duration)
            try settings.check(avifEncoderAddImage(encoder, image, UInt64(ticks), avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_NONE.rawValue)))
            frameCount += 1
        } catch {
            close()
            throw error
        }
    }

    func finish() throws(ImageEncodingError) -> Data {
        guard let encoder else { throw input.closed }
        defer { close() }
        guard frameCount > 0 else { throw input.empty }
        return try settings.finish(encoder)
    }

    private func close() {
        if let encoder { avifEncoderDestroy(encoder) }
        encoder = nil
    }
}
