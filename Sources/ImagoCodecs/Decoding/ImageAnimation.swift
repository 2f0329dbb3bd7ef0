import Foundation

/// The frames of an animated image, decoded one at a time from the encoded
/// data, so that a long animation costs one frame of memory, not all of them.
///
/// ```swift
/// let image = try await pipeline.image(for: url).image   // the first frame
/// if let animation = image.animation {
///     let frames = try animation.frames()
///     var index = 0
///     while let frame = try frames.next() {
///         show(frame, for: animation.frameDurations[index])
///         index += 1
///     }
/// }
/// ```
///
/// Frames are whole canvases (GIF and WebP frames are composited onto the
/// previous ones as the format prescribes), at ``frameSize``: the size the
/// request's target size and content mode give, like the first frame.
public final class ImageAnimation: Sendable, Equatable {
    /// The number of frames, the first included.
    public let frameCount: Int
    /// How many times the animation plays; 0 means forever.
    public let loopCount: Int
    /// How long each frame is shown, in seconds. Durations of 10 ms or less
    /// are 100 ms, as browsers show them.
    public let frameDurations: [Double]
    /// The size of every frame.
    public let frameSize: ImageSize
    /// The encoded image the frames are decoded from.
    public let data: Data

    private let makeSource: @Sendable () throws(ImageDecodingError) -> any AnimationFrameSource

    init(
        data: Data,
        loopCount: Int,
        frameDurations: [Double],
        frameSize: ImageSize,
        makeSource: @escaping @Sendable () throws(ImageDecodingError) -> any AnimationFrameSource
    ) {
        self.data = data
        self.frameCount = frameDurations.count
        self.loopCount = loopCount
        self.frameDurations = frameDurations
        self.frameSize = frameSize
        self.makeSource = makeSource
    }

    /// A new pass over the frames, from the first. Each call to
    /// ``Frames/next()`` decodes one frame.
    public func frames() throws(ImageDecodingError) -> Frames {
        Frames(source: try makeSource(), size: frameSize)
    }

    /// Two animations are equal only if they are the same object.
    public static func == (lhs: ImageAnimation, rhs: ImageAnimation) -> Bool { lhs === rhs }

    /// Decodes the frames of one pass over an animation, in order.
    public final class Frames {
        private let source: any AnimationFrameSource
        private let size: ImageSize

        init(source: any AnimationFrameSource, size: ImageSize) {
            self.source = source
            self.size = size
        }

        /// The next frame, or `nil` after the last one.
        public func next() throws(ImageDecodingError) -> Image? {
            guard let frame = try source.nextFrame() else { return nil }
            guard frame.size != size else { return frame }
            return ImageResizer.resize(frame, to: size) ?? frame
        }
    }

    /// A frame duration as browsers show it: 10 ms or less is 100 ms.
    static func displayDuration(seconds: Double) -> Double {
        seconds <= 0.010 ? 0.1 : seconds
    }

    /// Decodes the first frame of an animation with `source` (a fresh pass
    /// made by `makeSource`) and attaches the animation to it when there is
    /// more than one frame.
    static func firstFrame(
        of data: Data,
        format: ImageFormat,
        loopCount: Int,
        frameDurations: [Double],
        frameSize: ImageSize,
        source: any AnimationFrameSource,
        makeSource: @escaping @Sendable () throws(ImageDecodingError) -> any AnimationFrameSource
    ) throws(ImageDecodingError) -> Image {
        let animation = ImageAnimation(
            data: data, loopCount: loopCount, frameDurations: frameDurations, frameSize: frameSize, makeSource: makeSource
        )
        guard var first = try Frames(source: source, size: frameSize).next() else {
            throw ImageDecodingError(code: .corrupt, format: format, detail: "no frames")
        }
        if animation.frameCount > 1 { first.animation = animation }
        return first
    }
}

/// Decodes an animation's frames in order, each a full canvas. Owned by one
/// ``ImageAnimation/Frames`` pass, never shared between threads at once.
protocol AnimationFrameSource: AnyObject {
    /// The next frame, or `nil` after the last one.
    func nextFrame() throws(ImageDecodingError) -> Image?
}

/// A copy of encoded bytes at a stable address, for codecs that keep a
/// pointer to their input between calls.
final class PinnedBytes {
    let baseAddress: UnsafeMutableRawPointer
    let count: Int

    init(_ data: Data) {
        count = data.count
        baseAddress = .allocate(byteCount: max(1, count), alignment: 16)
        data.withUnsafeBytes { bytes in
            if let source = bytes.baseAddress { baseAddress.copyMemory(from: source, byteCount: bytes.count) }
        }
    }

    deinit { baseAddress.deallocate() }
}
