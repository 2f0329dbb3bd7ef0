import CGif
import Foundation

/// Encodes GIF with giflib, still or animated, with palettes from
/// libimagequant.
///
/// ```swift
/// let still = try GIFEncoder().encode(image)
/// let animated = try GIFEncoder().encode(frames: frames, durations: durations, loopCount: 0)
/// ```
///
/// Colours: a frame of at most 256 colours (transparency counting as one)
/// keeps them exactly, with no dithering. A still image of more is
/// quantised to 256 by libimagequant with Floyd–Steinberg dithering
/// (``dithering``). In an animation, libimagequant makes 255 colours (the
/// 256th index is transparency) from the first frame of more than 256, and
/// the frames after it are mapped to that palette by ``GIFColorMapper``
/// (serpentine Floyd–Steinberg), so that they need no table of their own
/// and one run of the quantiser serves many frames. A frame that the
/// palette fits badly (a new scene: its error without dithering is well
/// above what the palette had on the frame it was made from) gets a palette
/// of its own, which the frames after it share in turn.
///
/// Transparency: GIF has one bit of alpha, so a pixel with alpha under 128
/// is transparent and any other is opaque.
///
/// Animations: a frame after the first covers only the rectangle where it
/// differs from what is shown before it, and pixels inside that rectangle
/// that are unchanged are transparent, so they keep the earlier frame's
/// colour; a frame is cleared (disposal to background) only where the next
/// one turns pixels transparent. Delays are in hundredths of a second,
/// rounded so that the running time stays close to the durations' sum; a
/// delay is at least 2 (browsers show 0 and 1 as 10) and at most 65535.
///
/// Loop count: GIF's NETSCAPE2.0 extension counts repetitions after the first
/// play, as browsers read it (Chromium's `cc/paint/image_animation_count.h`:
/// "the animation plays n + 1 cycles"). So a `loopCount` of 0 (forever) is
/// written as 0, 1 (play once) as no extension at all, and n > 1 as n − 1;
/// ``GIFDecoder`` reads it back the same way.
///
/// No metadata is written (GIF has no standard place for EXIF or ICC).
public struct GIFEncoder: ImageEncoding, AnimatedImageEncoding {
    /// How much of the quantisation error is spread to the neighbouring
    /// pixels (Floyd–Steinberg), from 0 (none) to 1 (all, the default).
    /// Used only for frames of more than 256 colours.
    public var dithering: Float
    /// libimagequant's speed, 1 (slowest, closest colours) to 10 (fastest).
    /// Default: 7, about a third of the time of libimagequant's own default
    /// (4) for nearly the same error; from 8 it cuts corners that show.
    public var speed: Int

    /// The most times an animation can play other than forever: the
    /// extension's 65535 repetitions after the first play.
    public static let maximumLoopCount = 65536

    /// Creates an encoder; `dithering` is clamped to 0...1, `speed` to 1...10.
    public init(dithering: Float = 1, speed: Int = 7) {
        self.dithering = dithering.isNaN ? 1 : min(1, max(0, dithering))
        self.speed = min(10, max(1, speed))
    }

    public var format: ImageFormat { .gif }

    public func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        let writer = try GIFAnimationWriter(frameSize: image.size, loopCount: 1, quantiser: quantiser, isStill: true)
        try writer.addFrame(image, duration: 0)
        return try writer.finish()
    }

    public func animationWriter(frameSize: ImageSize, loopCount: Int) throws(ImageEncodingError) -> any AnimationWriting {
        try GIFAnimationWriter(frameSize: frameSize, loopCount: loopCount, quantiser: quantiser, isStill: false)
    }

    private var quantiser: GIFPalette.Quantiser { GIFPalette.Quantiser(dithering: dithering, speed: speed) }
}

/// Writes a GIF one frame behind the frames added: how a frame must be
/// disposed of depends on the next one (whether it turns pixels
/// transparent), so a frame is written once the next one arrives, or at the
/// end.
final class GIFAnimationWriter: AnimationWriting {
    let frameSize: ImageSize
    private(set) var frameCount = 0
    private let input: AnimationInput
    private let loopCount: Int
    private let quantiser: GIFPalette.Quantiser
    /// A still image: a graphic control extension only for transparency.
    private let isStill: Bool
    /// Open until finished or failed.
    private var file: GIFFileWriter?
    private var timeline = AnimationTimeline(ticksPerSecond: 100, minimumTicks: 2, maximumTicks: 0xFFFF)
    /// The frame added last, not written yet.
    private var pending: (pixels: [UInt32], delay: Int)?
    /// What a viewer shows before the pending frame is drawn; `nil` before
    /// the first frame (all transparent).
    private var canvas: [UInt32]?
    /// The global colour table, once the first frame is written.
    private var globalColors: [(red: UInt8, green: UInt8, blue: UInt8)]?
    /// The palette that frames of more than 256 colours are mapped to, and
    /// its error on the frame it was made from (``GIFColorMapper/Mapping``).
    private var shared: (mapper: GIFColorMapper, fit: Double)?

    /// Whether the shared palette still fits a frame on which its mean
    /// squared error (without dithering) is `error`, having been `fit` on
    /// the frame it was made from: at most a level and three quarters a
    /// channel worse (9 in squared RGB distance), or a tenth on frames it
    /// fits loosely (grain or noise changing the error from frame to frame).
    /// More shows: the colours it lacks cannot be dithered from the ones it
    /// has, and whole areas shift colour.
    static func acceptsSharedPalette(error: Double, fit: Double) -> Bool { error <= max(fit + 9, fit * 1.1) }

    init(frameSize: ImageSize, loopCount: Int, quantiser: GIFPalette.Quantiser, isStill: Bool) throws(ImageEncodingError) {
        input = try AnimationInput(
            format: .gif, frameSize: frameSize, loopCount: loopCount, maximumSide: 0xFFFF, maximumLoopCount: GIFEncoder.maximumLoopCount)
        self.frameSize = frameSize
        self.loopCount = loopCount
        self.quantiser = quantiser
        self.isStill = isStill
        file = try GIFFileWriter()
    }

    func addFrame(_ frame: Image, duration: Double) throws(ImageEncodingError) {
        guard let file else { throw input.closed }
        do throws(ImageEncodingError) {
            try input.check(frame, duration: duration, index: frameCount)
            let pixels = GIFPixels.of(frame)
            let delay = timeline.ticks(for: duration)
            if let pending { try write(pending, before: pixels, to: file) }
            pending = (pixels, delay)
            frameCount += 1
        } catch {
            close()
            throw error
        }
    }

    func finish() throws(ImageEncodingError) -> Data {
        guard let file else { throw input.closed }
        defer { close() }
        guard let pending else { throw input.empty }
        try write(pending, before: nil, to: file)
        return try file.close()
    }

    private func close() {
        file = nil
        pending = nil
        canvas = nil
    }

    /// Writes `frame`, given the frame after it (`nil` for the last), and
    /// moves the canvas on to what a viewer shows after it.
    private func write(_ frame: (pixels: [UInt32], delay: Int), before next: [UInt32]?, to file: GIFFileWriter) throws(ImageEncodingError) {
        let (width, height) = (frameSize.width, frameSize.height)
        let pixels = frame.pixels
        let isFirst = canvas == nil
        let shown = canvas ?? [UInt32](repeating: GIFPixels.transparent, count: pixels.count)
        // The first frame covers the screen: viewers that fill the rest with
        // the background colour would show it otherwise.
        let changed =
            isFirst
            ? GIFRect(x: 0, y: 0, width: width, height: height)
            : GIFRect.bounding(width: width, height: height) { pixels[$0] != shown[$0] }
        // Where the next frame is transparent over this one's opaque pixels,
        // this one must be cleared, which disposal does for its whole rectangle.
        let cleared = next.flatMap { next in
            GIFRect.bounding(width: width, height: height) { pixels[$0] != GIFPixels.transparent && next[$0] == GIFPixels.transparent }
        }
        // An unchanged frame still needs a pixel to be a frame.
        let rect = (changed ?? GIFRect(x: 0, y: 0, width: 1, height: 1)).union(cleared)
        let palette = try self.palette(of: pixels, shown: shown, in: rect)
        if isFirst {
            try file.putScreen(width: width, height: height, colors: palette.colors)
            if loopCount != 1 { try file.putLoopExtension(repetitions: max(0, loopCount - 1)) }
            globalColors = palette.colors
        }
        let usesGlobalColors = globalColors?.elementsEqual(palette.colors) { $0 == $1 } ?? false
        let disposal = cleared == nil ? DISPOSE_DO_NOT : DISPOSE_BACKGROUND
        let needsControl = !isStill || palette.transparentIndex != nil
        try file.putFrame(rect, palette: palette, usesGlobalColors: usesGlobalColors, control: needsControl ? (frame.delay, disposal) : nil)
        var after = pixels
        if cleared != nil {
            for y in rect.y..<(rect.y + rect.height) {
                let start = y * width + rect.x
                after.replaceSubrange(start..<(start + rect.width), with: repeatElement(GIFPixels.transparent, count: rect.width))
            }
        }
        canvas = after
    }

    /// The palette and indices of `rect` of `pixels`, where a pixel equal to
    /// what is `shown` under it is left transparent (kept as it is).
    private func palette(of pixels: [UInt32], shown: [UInt32], in rect: GIFRect) throws(ImageEncodingError) -> GIFPalette {
        let width = frameSize.width
        /// The rectangle's pixels, those equal to what is shown made transparent if `keeping`.
        func cut(keeping: Bool) -> [UInt32] {
            var cut = [UInt32](repeating: GIFPixels.transparent, count: rect.width * rect.height)
            for y in 0..<rect.height {
                for x in 0..<rect.width {
                    let source = (rect.y + y) * width + rect.x + x
                    let pixel = pixels[source]
                    cut[y * rect.width + x] = keeping && pixel == shown[source] ? GIFPixels.transparent : pixel
                }
            }
            return cut
        }
        let drawn = cut(keeping: true)
        if let exact = GIFPalette.exact(drawn) { return exact }
        // Drawing the unchanged pixels too may fit in 256 colours when
        // keeping them transparent took the 256th.
        let whole = cut(keeping: false)
        if !whole.contains(GIFPixels.transparent), let exact = GIFPalette.exact(whole) { return exact }
        if isStill { return try GIFPalette.quantised(drawn, width: rect.width, height: rect.height, with: quantiser) }
        if let (mapper, fit) = shared {
            let mapping = mapper.map(drawn, width: rect.width, height: rect.height, dithering: quantiser.dithering)
            if Self.acceptsSharedPalette(error: mapping.meanSquaredError, fit: fit) { return mapping.palette }
        }
        // A new shared palette, made from the whole frame rather than the
        // changed rectangle, so that it fits the frames after this one too.
        let colors = try GIFPalette.colors(of: pixels, width: width, height: frameSize.height, maximum: 255, with: quantiser)
        let mapper = GIFColorMapper(colors: colors)
        let mapping = mapper.map(drawn, width: rect.width, height: rect.height, dithering: quantiser.dithering)
        shared = (mapper, mapping.meanSquaredError)
        return mapping.palette
    }
}
