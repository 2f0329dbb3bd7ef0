import CLibFuzzer
import Foundation
import ImagoCodecs

/// What a fuzz target does with one input: sniff it, read its metadata,
/// decode it at full size and at a small target size (preferring an
/// embedded thumbnail), and decode every frame of an animation, as the
/// pipeline, the service and a player would. A thrown ``ImageDecodingError`` is the
/// expected answer to bad input; a crash, a sanitizer report, a timeout or a
/// broken invariant below is a bug.
///
/// ```swift
/// @_cdecl("LLVMFuzzerTestOneInput")
/// public func fuzzPNG(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
///     DecoderFuzzing.run(PNGDecoder(), bytes, count)
/// }
///
/// DecoderFuzzing.main(fuzzPNG)
/// ```
public enum DecoderFuzzing {
    /// Small limits, so that an input declaring a huge image or thousands of
    /// frames is refused quickly instead of using up the run's time and memory.
    public static let options = ImageDecodingOptions(maximumPixelCount: 4_000_000, maximumFrameCount: 50)

    /// Hands the command line to libFuzzer, which calls `testOneInput` with
    /// each input; never returns. (SwiftPM renames an executable's `main`, so
    /// the target starts libFuzzer's driver itself rather than linking its `main`.)
    public static func main(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
    }

    /// Runs `decoder` over the `count` bytes at `bytes`, and over its pages
    /// 1 to `laterPages` (``ImageDecodingOptions/page``); always returns 0,
    /// as libFuzzer requires.
    public static func run(_ decoder: some ImageDecoding, _ bytes: UnsafePointer<UInt8>?, _ count: Int, laterPages: Int = 0) -> Int32 {
        let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
        _ = ImageFormat(sniffing: data)
        _ = ImageFormat.describeUnrecognised(data)
        let metadata = ImageMetadata(reading: data)
        _ = (metadata.keepingCopyrightOnly(), metadata.upright())
        _ = (ImageHeader(data), options.decodedBytesEstimate(of: data))
        for page in stride(from: 1, through: laterPages, by: 1) {
            var later = options
            later.page = page
            _ = decode(decoder, data, options: later)
        }
        guard let image = decode(decoder, data, options: options) else { return 0 }
        // Scaled decoding takes other paths (DCT scaling, libwebp's scaler, the resizer).
        var small = options
        small.targetSize = ImageSize(width: max(1, image.width / 3), height: max(1, image.height / 5))
        small.contentMode = image.width % 2 == 0 ? .fill : .fit
        small.prefersEmbeddedThumbnail = true
        _ = decode(decoder, data, options: small)
        return 0
    }

    /// The first frame, after every other frame was decoded; `nil` if the
    /// decoder refused the data.
    private static func decode(_ decoder: some ImageDecoding, _ data: Data, options: ImageDecodingOptions) -> Image? {
        let image: Image
        do {
            image = try decoder.decode(data, options: options)
        } catch {
            return nil
        }
        check(image.width * image.height <= options.maximumPixelCount, "\(image) is over the pixel limit")
        guard let animation = image.animation else { return image }
        check(animation.frameCount <= options.maximumFrameCount, "\(animation.frameCount) frames, over the limit")
        check(animation.frameDurations.allSatisfy { $0 > 0 }, "a frame duration is not positive")
        var count = 0
        do {
            let frames = try animation.frames()
            while let frame = try frames.next() {
                count += 1
                check(count <= animation.frameCount, "more frames decoded than the \(animation.frameCount) announced")
                check(frame.size == animation.frameSize, "frame \(count) is \(frame.size), not \(animation.frameSize)")
            }
        } catch {
            // A damaged later frame is an error for that frame, not a crash.
        }
        return image
    }

    /// Stops the run with `message` (libFuzzer keeps the input) if `condition` is false.
    private static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("invariant broken: \(message())") }
    }
}
