import Foundation

/// Turns a run of frames into an animated image (GIF, animated WebP, AVIF
/// sequence).
///
/// Frames are handed over one at a time through an ``AnimationWriting``
/// writer, so that a long animation is never held in memory whole: decode a
/// frame, process it, add it, let it go. Every frame has the size given when
/// the writer is made; each is shown for its own duration, in seconds.
///
/// ```swift
/// let writer = try GIFEncoder().animationWriter(frameSize: ImageSize(width: 320, height: 240), loopCount: 0)
/// for (frame, duration) in zip(frames, durations) {
///     try writer.addFrame(frame, duration: duration)
/// }
/// let bytes = try writer.finish()
/// ```
///
/// These are processed frames, not an ``ImageAnimation`` (which decodes its
/// frames from encoded data): the frames of a decoded animation can be
/// resized one by one and passed on as they come.
public protocol AnimatedImageEncoding: Sendable {
    /// The format produced.
    var format: ImageFormat { get }

    /// Starts an animation of frames of `frameSize` that plays `loopCount`
    /// times (0: forever), as ``ImageAnimation/loopCount`` counts.
    func animationWriter(frameSize: ImageSize, loopCount: Int) throws(ImageEncodingError) -> any AnimationWriting
}

/// One animation being written: frames are added in order, then
/// ``finish()`` returns the encoded bytes.
///
/// A writer has one owner and is not shared between threads. After an error,
/// or after ``finish()``, every call throws.
public protocol AnimationWriting: AnyObject {
    /// The size every frame must have.
    var frameSize: ImageSize { get }
    /// How many frames have been added.
    var frameCount: Int { get }

    /// Adds the next frame, shown for `duration` seconds (finite, not
    /// negative). Durations are rounded to the format's unit so that the
    /// animation's running time stays as close as possible to their sum.
    func addFrame(_ frame: Image, duration: Double) throws(ImageEncodingError)

    /// Ends the animation and returns its bytes. At least one frame must
    /// have been added.
    func finish() throws(ImageEncodingError) -> Data
}

extension AnimatedImageEncoding {
    /// Encodes frames that are all in memory: `frames[i]` is shown for
    /// `durations[i]` seconds, and the animation plays `loopCount` times
    /// (0: forever). All frames must have the first one's size.
    ///
    /// ```swift
    /// let bytes = try WebPEncoder(quality: 75).encode(frames: [first, second], durations: [0.1, 0.1], loopCount: 0)
    /// ```
    public func encode(frames: [Image], durations: [Double], loopCount: Int) throws(ImageEncodingError) -> Data {
        guard let first = frames.first else { throw ImageEncodingError(format: format, detail: "an animation needs at least one frame") }
        guard durations.count == frames.count else {
            throw ImageEncodingError(format: format, detail: "\(frames.count) frames but \(durations.count) durations")
        }
        let writer = try animationWriter(frameSize: first.size, loopCount: loopCount)
        for (frame, duration) in zip(frames, durations) {
            try writer.addFrame(frame, duration: duration)
        }
        return try writer.finish()
    }
}

/// The checks every animation writer makes on what it is given, with the
/// messages they fail with.
struct AnimationInput {
    let format: ImageFormat
    let frameSize: ImageSize

    /// Checks the size of the animation and its loop count against the
    /// format's limits.
    init(format: ImageFormat, frameSize: ImageSize, loopCount: Int, maximumSide: Int, maximumLoopCount: Int) throws(ImageEncodingError) {
        self.format = format
        self.frameSize = frameSize
        guard frameSize.width > 0, frameSize.height > 0 else {
            throw ImageEncodingError(format: format, detail: "frame size \(frameSize.width)x\(frameSize.height) is empty")
        }
        guard frameSize.width <= maximumSide, frameSize.height <= maximumSide else {
            throw ImageEncodingError(
                format: format, detail: "frame size \(frameSize.width)x\(frameSize.height) is over \(format)'s \(maximumSide) pixels a side")
        }
        guard loopCount >= 0, loopCount <= maximumLoopCount else {
            throw ImageEncodingError(format: format, detail: "loop count \(loopCount) is outside \(format)'s 0...\(maximumLoopCount)")
        }
    }

    /// Checks frame number `index` (from 0) and its duration.
    func check(_ frame: Image, duration: Double, index: Int) throws(ImageEncodingError) {
        guard frame.size == frameSize else {
            throw ImageEncodingError(
                format: format,
                detail: "frame \(index) is \(frame.width)x\(frame.height), the animation \(frameSize.width)x\(frameSize.height)")
        }
        guard duration.isFinite, duration >= 0 else {
            throw ImageEncodingError(format: format, detail: "frame \(index) has duration \(duration) s: durations must be finite and not negative")
        }
    }

    /// The error for a call on a writer that has finished or failed.
    var closed: ImageEncodingError {
        ImageEncodingError(format: format, detail: "the animation writer has finished or failed")
    }

    /// The error for finishing an animation without frames.
    var empty: ImageEncodingError {
        ImageEncodingError(format: format, detail: "an animation needs at least one frame")
    }
}
