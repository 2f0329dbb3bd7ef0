import CWebP
import Foundation

/// Animated WebP through libwebpmux's `WebPAnimEncoder`, lossy at
/// ``WebPEncoder/quality`` or lossless as the encoder is set.
///
/// ```swift
/// let writer = try WebPEncoder(quality: 75).animationWriter(frameSize: size, loopCount: 0)
/// try writer.addFrame(first, duration: 0.1)
/// try writer.addFrame(second, duration: 0.1)
/// let bytes = try writer.finish()
/// ```
///
/// Durations are whole milliseconds, rounded so that the running time stays
/// close to the durations' sum; a frame lasts at least 11 ms (browsers show
/// 10 ms or less as 100 ms) and at most 16,777,215 ms (ANMF's 24 bits). The
/// loop count is ANIM's: the number of plays, 0 for forever, as Chromium
/// reads it. libwebpmux leaves out a frame that shows no change from the one
/// before (in lossy mode, no change it judges visible at the quality) and
/// adds its duration to that one, so an animation may come back with fewer
/// frames. The ``WebPEncoder/metadata`` (ICC, EXIF, XMP) is written as for
/// a still image.
extension WebPEncoder: AnimatedImageEncoding {
    /// The most times an animation can play other than forever (ANIM's 16 bits).
    public static let maximumLoopCount = 0xFFFF

    public func animationWriter(frameSize: ImageSize, loopCount: Int) throws(ImageEncodingError) -> any AnimationWriting {
        try WebPAnimationWriter(settings: self, frameSize: frameSize, loopCount: loopCount)
    }
}

/// One animated WebP, its frames encoded as they are added (libwebpmux
/// keeps the encoded frames and a canvas or two, not the frames added).
final class WebPAnimationWriter: AnimationWriting {
    let frameSize: ImageSize
    private(set) var frameCount = 0
    private let input: AnimationInput
    private let metadata: ImageMetadata
    private var config = WebPConfig()
    /// Open until finished or failed.
    private var encoder: OpaquePointer?
    private var timeline = AnimationTimeline(ticksPerSecond: 1000, minimumTicks: 11, maximumTicks: 0xFF_FFFF)

    init(settings: WebPEncoder, frameSize: ImageSize, loopCount: Int) throws(ImageEncodingError) {
        input = try AnimationInput(
            format: .webp, frameSize: frameSize, loopCount: loopCount, maximumSide: Int(WEBP_MAX_DIMENSION),
            maximumLoopCount: WebPEncoder.maximumLoopCount)
        self.frameSize = frameSize
        metadata = settings.metadata
        var options = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&options) != 0, WebPConfigInit(&config) != 0 else {
            throw ImageEncodingError(format: .webp, detail: "libwebp version mismatch")
        }
        options.anim_params.loop_count = Int32(loopCount)
        // Lossy or lossless as asked, not whichever is smaller frame by frame.
        options.allow_mixed = 0
        config.lossless = settings.isLossless ? 1 : 0
        config.quality = settings.quality
        guard WebPValidateConfig(&config) != 0 else { throw ImageEncodingError(format: .webp, detail: "invalid encoder settings") }
        guard let encoder = WebPAnimEncoderNew(Int32(frameSize.width), Int32(frameSize.height), &options) else {
            throw ImageEncodingError(format: .webp, detail: "libwebpmux could not start an animation of \(frameSize)")
        }
        self.encoder = encoder
    }

    deinit {
        if let encoder { WebPAnimEncoderDelete(encoder) }
    }

    func addFrame(_ frame: Image, duration: Double) throws(ImageEncodingError) {
        guard let encoder else { throw input.closed }
        do throws(ImageEncodingError) {
            try input.check(frame, duration: duration, index: frameCount)
            let start = timeline.elapsedTicks
            _ = timeline.ticks(for: duration)
            guard timeline.elapsedTicks <= Int(Int32.max) else {
                throw ImageEncodingError(format: .webp, detail: "the animation is longer than WebP's timestamps reach (\(Int32.max) ms)")
            }
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw ImageEncodingError(format: .webp, detail: "libwebp version mismatch") }
            picture.width = Int32(frame.width)
            picture.height = Int32(frame.height)
            picture.use_argb = 1
            defer { WebPPictureFree(&picture) }
            let color = frame.colorPixels()
            let imported = color.pixels.withUnsafeBufferPointer { pixels in
                frame.pixelFormat.hasAlpha
                    ? WebPPictureImportRGBA(&picture, pixels.baseAddress, Int32(color.bytesPerRow))
                    : WebPPictureImportRGB(&picture, pixels.baseAddress, Int32(color.bytesPerRow))
            }
            guard imported != 0 else { throw ImageEncodingError(format: .webp, detail: "out of memory importing frame \(frameCount)") }
            guard WebPAnimEncoderAdd(encoder, &picture, Int32(start), &config) != 0 else { throw error(encoder, "frame \(frameCount)") }
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
        // A last call without a frame gives the last frame its duration.
        guard WebPAnimEncoderAdd(encoder, nil, Int32(timeline.elapsedTicks), nil) != 0 else { throw error(encoder, "the end") }
        var assembled = WebPData()
        guard WebPAnimEncoderAssemble(encoder, &assembled) != 0, let bytes = assembled.bytes else {
            throw error(encoder, "assembling")
        }
        defer { WebPDataClear(&assembled) }
        return try metadata.inserted(intoWebP: Data(bytes: bytes, count: assembled.size))
    }

    private func close() {
        if let encoder { WebPAnimEncoderDelete(encoder) }
        encoder = nil
    }

    private func error(_ encoder: OpaquePointer, _ step: String) -> ImageEncodingError {
        let message = WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "unknown error"
        return ImageEncodingError(format: .webp, detail: "libwebpmux failed at \(step): \(message)")
    }
}
