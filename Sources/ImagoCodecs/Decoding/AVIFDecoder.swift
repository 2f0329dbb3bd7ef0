import CAvif
import CHeif
import Foundation

/// Decodes AVIF with libavif (its AV1 decoder is dav1d or libaom, whichever
/// Debian's build links), still images and image sequences, 8 to 12 bits
/// per channel reduced to 8. Colours are converted to sRGB from the ICC
/// profile, else the colour code points (deeper images at 16 bits, before
/// the reduction), unless ``ImageDecodingOptions/convertsToSRGB`` is off.
///
/// Output: ``Image/PixelFormat/rgba8`` when the image has alpha,
/// ``Image/PixelFormat/rgb8`` otherwise. AVIF has no scaled decoding, so
/// images are decoded whole and resampled. The crop (clap, when it is a
/// whole-pixel rectangle), rotation and mirroring boxes (irot, imir) are
/// applied in that order, so the image comes out as a browser shows it.
/// With ``ImageDecodingOptions/prefersEmbeddedThumbnail`` an embedded
/// thumbnail is decoded instead, if libheif finds one and can decode AV1.
public struct AVIFDecoder: ImageDecoding {
    /// Creates an AVIF decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .avif }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        // libavif reads no thumbnails; libheif does, when it has an AV1 decoder.
        if options.prefersEmbeddedThumbnail, heif_have_decoder_for_format(heif_compression_AV1) != 0,
            let thumbnail = try? HEIFDecoder.decodeThumbnail(of: data, options: options)
        {
            return thumbnail
        }
        let source = try AVIFFrameSource(data, options: options)
        let frameCount = Int(source.decoder.pointee.imageCount)
        var durations: [Double] = []
        for index in 0..<frameCount {
            var timing = avifImageTiming()
            let seconds = avifDecoderNthImageTiming(source.decoder, UInt32(index), &timing) == AVIF_RESULT_OK ? timing.duration : 0
            durations.append(ImageAnimation.displayDuration(seconds: seconds))
        }
        return try ImageAnimation.firstFrame(
            of: data,
            format: .avif,
            loopCount: 0,
            frameDurations: durations,
            frameSize: options.outputSize(for: source.uprightSize),
            source: source,
            makeSource: { () throws(ImageDecodingError) in try AVIFFrameSource(data, options: options) }
        )
    }
}

/// One pass over an AVIF's images (one for a still image).
final class AVIFFrameSource: AnimationFrameSource {
    private let bytes: PinnedBytes
    let decoder: UnsafeMutablePointer<avifDecoder>
    /// What the frames are converted to sRGB from: the ICC profile, else
    /// the colour code points; nil to keep them as stored.
    private var colorSpace: DeclaredColorSpace?

    /// Parses the container (no pixels yet) and checks the limits.
    init(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) {
        bytes = PinnedBytes(data)
        guard let decoder = avifDecoderCreate() else {
            throw ImageDecodingError(code: .corrupt, format: .avif, detail: "libavif could not start")
        }
        self.decoder = decoder
        // libavif's own size and count limits stay at their defaults: ours
        // are checked after parsing (which allocates no pixels), so that
        // going over them is reported as such rather than as a parse error.
        decoder.pointee.maxThreads = 1
        // Off, as in browsers and Pillow: files with a crop (clap) at an odd
        // offset or without a pixi property are common and decode fine.
        decoder.pointee.strictFlags = avifStrictFlags(AVIF_STRICT_DISABLED.rawValue)
        try check(avifDecoderSetIOMemory(decoder, bytes.baseAddress.assumingMemoryBound(to: UInt8.self), bytes.count))
        try check(avifDecoderParse(decoder))
        let image = decoder.pointee.image.pointee
        try options.checkPixelCount(width: Int(image.width), height: Int(image.height), format: .avif)
        let frames = Int(decoder.pointee.imageCount)
        guard frames <= options.maximumFrameCount else {
            throw ImageDecodingError(code: .tooManyFrames(count: frames, limit: options.maximumFrameCount), format: .avif)
        }
        if options.convertsToSRGB {
            if let profile = image.icc.data, image.icc.size > 0 {
                colorSpace = .icc(Data(bytes: profile, count: image.icc.size))
            } else {
                colorSpace = .cicp(primaries: Int(image.colorPrimaries), transfer: Int(image.transferCharacteristics))
            }
        }
    }

    deinit { avifDecoderDestroy(decoder) }

    func nextFrame() throws(ImageDecodingError) -> Image? {
        let status = avifDecoderNextImage(decoder)
        if status == AVIF_RESULT_NO_IMAGES_REMAINING { return nil }
        try check(status)
        guard let image = decoder.pointee.image else { return nil }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        let hasAlpha = image.pointee.alphaPlane != nil
        let channels = hasAlpha ? 4 : 3
        let width = Int(image.pointee.width)
        let height = Int(image.pointee.height)
        rgb.format = hasAlpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        let layout: ColorTransform.Layout = hasAlpha ? .rgba8 : .rgb8
        // Deeper than 8 bits and converted: to 16 bits first, so that the
        // conversion reduces to 8 bits with nothing lost before it.
        let wideLayout: ColorTransform.Layout = hasAlpha ? .rgba16 : .rgb16
        let wide = image.pointee.depth > 8 ? colorSpace.flatMap { ColorTransform.toSRGB(from: $0, wideLayout, to: layout) } : nil
        rgb.depth = wide == nil ? 8 : 16
        rgb.rowBytes = UInt32(width * channels * (wide == nil ? 1 : 2))
        var converted = AVIF_RESULT_OK
        var pixels = [UInt8](unsafeUninitializedCapacity: Int(rgb.rowBytes) * height) { output, initialized in
            rgb.pixels = output.baseAddress
            converted = avifImageYUVToRGB(image, &rgb)
            // On failure the buffer is dropped unread.
            initialized = output.count
        }
        try check(converted)
        if let wide {
            pixels = pixels.withUnsafeBytes { source in
                [UInt8](unsafeUninitializedCapacity: width * height * channels) { output, initialized in
                    if let input = source.baseAddress, let target = output.baseAddress {
                        wide.convert(input, into: target, count: width * height)
                    }
                    initialized = output.count
                }
            }
        }
        guard var decoded = Image(width: width, height: height, pixelFormat: hasAlpha ? .rgba8 : .rgb8, pixels: pixels) else {
            throw ImageDecodingError(code: .corrupt, format: .avif, detail: "inconsistent sizes")
        }
        if wide == nil { decoded = decoded.convertedToSRGB(from: colorSpace) }
        let cropped =
            Self.crop(of: image.pointee).flatMap { ImageProcessors.Crop(x: $0.x, y: $0.y, width: $0.width, height: $0.height).process(decoded) }
            ?? decoded
        return Self.transforms(of: image.pointee).reduce(cropped) { $1.apply(to: $0) }
    }

    /// The size of the images once cropped and turned as the container says.
    var uprightSize: ImageSize {
        let image = decoder.pointee.image.pointee
        let cropped = Self.crop(of: image).map { ImageSize(width: $0.width, height: $0.height) }
        let stored = cropped ?? ImageSize(width: Int(image.width), height: Int(image.height))
        return Self.transforms(of: image).reduce(stored) { size, transform in transform.swapsDimensions ? size.transposed : size }
    }

    /// The clean aperture (clap) as a whole-pixel rectangle inside the
    /// image, or nil when there is none or it is fractional or outside (then
    /// it is ignored, as browsers do). Any offset is accepted, odd ones too,
    /// which libavif's strict checks refuse for subsampled chroma.
    static func crop(of image: avifImage) -> (x: Int, y: Int, width: Int, height: Int)? {
        guard image.transformFlags & avifTransformFlags(AVIF_TRANSFORM_CLAP.rawValue) != 0 else { return nil }
        let clap = image.clap
        /// The crop's start on one axis: (full - size) / 2 + offN / offD, whole and inside.
        func start(full: UInt32, sizeN: UInt32, sizeD: UInt32, offN: UInt32, offD: UInt32) -> (Int, Int)? {
            guard sizeD != 0, offD != 0, sizeN % sizeD == 0 else { return nil }
            let size = Int64(sizeN / sizeD)
            let offset = Int64(Int32(bitPattern: offN))
            let denominator = Int64(offD)
            let numerator = (Int64(full) - size) * denominator + 2 * offset
            guard size > 0, numerator % (2 * denominator) == 0 else { return nil }
            let first = numerator / (2 * denominator)
            guard first >= 0, first + size <= Int64(full) else { return nil }
            return (Int(first), Int(size))
        }
        guard let (x, width) = start(full: image.width, sizeN: clap.widthN, sizeD: clap.widthD, offN: clap.horizOffN, offD: clap.horizOffD),
            let (y, height) = start(full: image.height, sizeN: clap.heightN, sizeD: clap.heightD, offN: clap.vertOffN, offD: clap.vertOffD)
        else { return nil }
        return (x, y, width, height)
    }

    /// The image's rotation then mirroring (HEIF applies irot before imir),
    /// as orientations to apply in order.
    static func transforms(of image: avifImage) -> [ImageOrientation] {
        var transforms: [ImageOrientation] = []
        let flags = image.transformFlags
        if flags & avifTransformFlags(AVIF_TRANSFORM_IROT.rawValue) != 0 {
            // Anti-clockwise quarter turns.
            switch image.irot.angle & 3 {
            case 1: transforms.append(.left)
            case 2: transforms.append(.down)
            case 3: transforms.append(.right)
            default: break
            }
        }
        if flags & avifTransformFlags(AVIF_TRANSFORM_IMIR.rawValue) != 0 {
            // Mode 0 exchanges top and bottom, 1 left and right.
            transforms.append(image.imir.mode == 0 ? .downMirrored : .upMirrored)
        }
        return transforms
    }

    /// Fails with libavif's result and, where it left one, its diagnostic
    /// (which box or property was wrong).
    private func check(_ result: avifResult) throws(ImageDecodingError) {
        guard result != AVIF_RESULT_OK else { return }
        var detail = String(cString: avifResultToString(result))
        let diagnostic = withUnsafeBytes(of: decoder.pointee.diag.error) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        if !diagnostic.isEmpty { detail += ": " + diagnostic }
        throw ImageDecodingError(code: .corrupt, format: .avif, detail: detail)
    }
}
