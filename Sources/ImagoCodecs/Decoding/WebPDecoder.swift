import CWebP
import Foundation

/// Decodes WebP with libwebp: lossy, lossless and alpha images, scaled
/// while decoding straight to the output size when a target size is set,
/// and animations (through libwebpdemux), composited frame by frame.
///
/// Output: ``Image/PixelFormat/rgba8`` when the image has alpha,
/// ``Image/PixelFormat/rgb8`` otherwise; animation frames are always RGBA.
/// A still image's EXIF orientation is applied, as for JPEG, so it comes out
/// upright; animations are shown as stored. An ICCP profile is converted
/// from, to sRGB, unless ``ImageDecodingOptions/convertsToSRGB`` is off.
public struct WebPDecoder: ImageDecoding {
    /// Creates a WebP decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .webp }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBytes { bytes in
            WebPGetFeatures(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &features)
        }
        guard status == VP8_STATUS_OK else { throw Self.error(status) }
        // For an animation these are the canvas's: checked before the
        // animation decoder allocates it.
        try options.checkPixelCount(width: Int(features.width), height: Int(features.height), format: .webp)
        let space = options.convertsToSRGB ? Self.colorSpace(of: data) : nil
        if features.has_animation != 0 { return try decodeAnimation(data, space: space, options: options) }
        return try decodeStill(data, features: features, options: options).convertedToSRGB(from: space)
    }

    /// The ICC profile of the ICCP chunk, if there is one.
    private static func colorSpace(of data: Data) -> DeclaredColorSpace? {
        var profile: Data?
        data.withUnsafeBytes { bytes in
            RIFFChunks.forEach(in: bytes) { code, payload in
                if code.isText("ICCP") { profile = Data(payload) }
                return profile == nil
            }
        }
        return profile.map(DeclaredColorSpace.icc)
    }

    private func decodeStill(_ data: Data, features: WebPBitstreamFeatures, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw ImageDecodingError(code: .corrupt, format: .webp, detail: "libwebp version mismatch")
        }
        // The output size is the upright image's: turn it back to the stored axes.
        let orientation = ImageOrientation(webp: data)
        let stored = ImageSize(width: Int(features.width), height: Int(features.height))
        let upright = options.outputSize(for: orientation.swapsDimensions ? stored.transposed : stored)
        let size = orientation.swapsDimensions ? upright.transposed : upright
        if size.width != Int(features.width) || size.height != Int(features.height) {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(size.width)
            config.options.scaled_height = Int32(size.height)
        }
        let hasAlpha = features.has_alpha != 0
        let channels = hasAlpha ? 4 : 3
        config.output.colorspace = hasAlpha ? MODE_RGBA : MODE_RGB
        config.output.is_external_memory = 1
        var status = VP8_STATUS_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: size.width * size.height * channels) { output, initialized in
            config.output.u.RGBA.rgba = output.baseAddress
            config.output.u.RGBA.stride = Int32(size.width * channels)
            config.output.u.RGBA.size = output.count
            status = data.withUnsafeBytes { bytes in
                WebPDecode(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &config)
            }
            // On failure the buffer is dropped unread.
            initialized = output.count
        }
        WebPFreeDecBuffer(&config.output)
        guard status == VP8_STATUS_OK else { throw Self.error(status) }
        let image = Image(width: size.width, height: size.height, pixelFormat: hasAlpha ? .rgba8 : .rgb8, pixels: pixels)
        guard let image else { throw ImageDecodingError(code: .corrupt, format: .webp, detail: "inconsistent sizes") }
        return orientation.apply(to: image)
    }

    private func decodeAnimation(_ data: Data, space: DeclaredColorSpace?, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let transform = space.flatMap { ColorTransform.toSRGB(from: $0, .rgba8, to: .rgba8) }
        let source = try WebPFrameSource(data, transform: transform)
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(source.decoder, &info) != 0, let demuxer = WebPAnimDecoderGetDemuxer(source.decoder) else {
            throw ImageDecodingError(code: .corrupt, format: .webp, detail: "unreadable animation header")
        }
        guard Int(info.frame_count) <= options.maximumFrameCount else {
            throw ImageDecodingError(code: .tooManyFrames(count: Int(info.frame_count), limit: options.maximumFrameCount), format: .webp)
        }
        var durations: [Double] = []
        var iterator = WebPIterator()
        if WebPDemuxGetFrame(demuxer, 1, &iterator) != 0 {
            repeat {
                durations.append(ImageAnimation.displayDuration(seconds: Double(iterator.duration) / 1000))
            } while WebPDemuxNextFrame(&iterator) != 0
            WebPDemuxReleaseIterator(&iterator)
        }
        return try ImageAnimation.firstFrame(
            of: data,
            format: .webp,
            loopCount: Int(info.loop_count),
            frameDurations: durations,
            frameSize: options.outputSize(for: ImageSize(width: Int(info.canvas_width), height: Int(info.canvas_height))),
            source: source,
            makeSource: { () throws(ImageDecodingError) in try WebPFrameSource(data, transform: transform) }
        )
    }

    static func error(_ status: VP8StatusCode) -> ImageDecodingError {
        let detail =
            switch status {
            case VP8_STATUS_NOT_ENOUGH_DATA: "truncated data"
            case VP8_STATUS_BITSTREAM_ERROR: "bitstream error"
            case VP8_STATUS_UNSUPPORTED_FEATURE: "unsupported feature"
            case VP8_STATUS_OUT_OF_MEMORY: "out of memory"
            case VP8_STATUS_INVALID_PARAM: "invalid parameter"
            default: "libwebp status \(status.rawValue)"
            }
        return ImageDecodingError(code: .corrupt, format: .webp, detail: detail)
    }
}

/// One pass over an animated WebP's frames with libwebpdemux's animation
/// decoder, which composites each frame onto the canvas, then converts it
/// to sRGB with `transform`, if any.
final class WebPFrameSource: AnimationFrameSource {
    private let bytes: PinnedBytes
    private let transform: ColorTransform?
    let decoder: OpaquePointer

    init(_ data: Data, transform: ColorTransform? = nil) throws(ImageDecodingError) {
        bytes = PinnedBytes(data)
        self.transform = transform
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else {
            throw ImageDecodingError(code: .corrupt, format: .webp, detail: "libwebpdemux version mismatch")
        }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        var input = WebPData(bytes: bytes.baseAddress.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        guard let decoder = WebPAnimDecoderNew(&input, &options) else {
            throw ImageDecodingError(code: .corrupt, format: .webp, detail: "invalid or truncated animation")
        }
        self.decoder = decoder
    }

    func nextFrame() throws(ImageDecodingError) -> Image? {
        guard WebPAnimDecoderHasMoreFrames(decoder) != 0 else { return nil }
        var info = WebPAnimInfo()
        var canvas: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0, WebPAnimDecoderGetNext(decoder, &canvas, &timestamp) != 0, let canvas else {
            throw ImageDecodingError(code: .corrupt, format: .webp, detail: "damaged animation frame")
        }
        let count = Int(info.canvas_width) * Int(info.canvas_height) * 4
        var pixels = Array(UnsafeBufferPointer(start: canvas, count: count))
        if let transform {
            pixels.withUnsafeMutableBytes { bytes in
                if let base = bytes.baseAddress { transform.convert(base, into: base, count: count / 4) }
            }
        }
        guard let image = Image(width: Int(info.canvas_width), height: Int(info.canvas_height), pixelFormat: .rgba8, pixels: pixels) else {
            throw ImageDecodingError(code: .corrupt, format: .webp, detail: "inconsistent sizes")
        }
        return image
    }

    deinit { WebPAnimDecoderDelete(decoder) }
}
