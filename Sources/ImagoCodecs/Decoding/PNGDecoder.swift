import CSpng
import Foundation

/// Decodes PNG with libspng: every colour type and bit depth, palettes,
/// tRNS transparency, 16-bit (reduced to 8) and interlaced images.
///
/// Output: gray without transparency ``Image/PixelFormat/gray8``; gray with
/// an alpha channel or tRNS ``Image/PixelFormat/grayAlpha8``; truecolour or
/// palette without transparency ``Image/PixelFormat/rgb8``; anything with
/// transparency ``Image/PixelFormat/rgba8``. Colours are converted to sRGB
/// (unless ``ImageDecodingOptions/convertsToSRGB`` is off) from the iCCP
/// profile, else, without an sRGB chunk, from gAMA and cHRM, as browsers
/// do; a 16-bit image is converted before it is reduced to 8 bits. CRC and
/// zlib errors fail the decode.
///
/// With a target size smaller than the image, the rows are streamed from
/// libspng into the resampler one at a time, so a thumbnail of a huge PNG
/// needs a few rows of memory plus the output, not the whole image.
/// Interlaced (Adam7) images are decoded whole, then resampled.
public struct PNGDecoder: ImageDecoding {
    /// Creates a PNG decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .png }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        guard let context = spng_ctx_new(0) else {
            throw ImageDecodingError(code: .corrupt, format: .png, detail: "libspng could not start")
        }
        defer { spng_ctx_free(context) }
        let result = data.withUnsafeBytes { bytes -> Result<Image, ImageDecodingError> in
            Result { () throws(ImageDecodingError) in
                try check(spng_set_png_buffer(context, bytes.baseAddress, bytes.count))
                return try decode(context, options: options)
            }
        }
        return try result.get()
    }

    private func decode(_ context: OpaquePointer, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        // Ancillary chunks (text, ICC profiles) are cached by libspng: bound them.
        try check(spng_set_chunk_limits(context, 8 << 20, 16 << 20))
        var header = spng_ihdr()
        try check(spng_get_ihdr(context, &header))
        let width = Int(header.width)
        let height = Int(header.height)
        try options.checkPixelCount(width: width, height: height, format: .png)
        // Reading tRNS reads every chunk before the image data: a missing
        // or misplaced PLTE and the chunk limits surface here.
        var transparency = spng_trns()
        let trnsStatus = spng_get_trns(context, &transparency)
        if trnsStatus != Int32(SPNG_ECHUNKAVAIL.rawValue) { try check(trnsStatus) }
        let hasTRNS = trnsStatus == 0
        let colorType = UInt32(header.color_type)
        let isGray = colorType == SPNG_COLOR_TYPE_GRAYSCALE.rawValue || colorType == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA.rawValue
        let hasAlpha = hasTRNS || colorType == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA.rawValue || colorType == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA.rawValue
        // libspng's G8 and GA8 outputs do not cover every gray bit depth; RGB(A)8
        // covers all colour types, and gray is taken back from the red channel.
        var layout = Layout(isGray: isGray, hasAlpha: hasAlpha)
        if options.convertsToSRGB, let space = Self.colorSpace(context) {
            layout.convert(from: space, sixteenBits: header.bit_depth == 16)
        }
        let size = options.outputSize(for: ImageSize(width: width, height: height))
        let image: Image?
        if size.width < width || size.height < height, header.interlace_method == 0 {
            image = try decodeScaled(context, width: width, height: height, layout: layout, to: size)
        } else {
            image = try decodeWhole(context, width: width, height: height, layout: layout)
        }
        // The image can be complete before the last IDAT chunk's CRC is read:
        // read on to IEND so that a damaged chunk is still caught.
        try check(spng_decode_chunks(context))
        guard let image else {
            throw ImageDecodingError(code: .corrupt, format: .png, detail: "inconsistent sizes")
        }
        return image
    }

    /// What libspng is asked for, what the image keeps of it, and the
    /// conversion to sRGB on the way.
    private struct Layout {
        var spngFormat: Int32
        var pixelFormat: Image.PixelFormat
        /// The channels kept of each decoded pixel (all of them for colour).
        var kept: [Int]
        /// From the decoded (or kept) pixels to ``pixelFormat``'s, in sRGB.
        var transform: ColorTransform?

        init(isGray: Bool, hasAlpha: Bool) {
            spngFormat = Int32(hasAlpha ? SPNG_FMT_RGBA8.rawValue : SPNG_FMT_RGB8.rawValue)
            switch (isGray, hasAlpha) {
            case (true, false): (pixelFormat, kept) = (.gray8, [0])
            case (true, true): (pixelFormat, kept) = (.grayAlpha8, [0, 3])
            case (false, false): (pixelFormat, kept) = (.rgb8, [0, 1, 2])
            case (false, true): (pixelFormat, kept) = (.rgba8, [0, 1, 2, 3])
            }
        }

        /// Converts from `space`: a 16-bit colour image is decoded at 16
        /// bits and reduced to 8 by the conversion itself, so that no
        /// precision is lost before it.
        mutating func convert(from space: DeclaredColorSpace, sixteenBits: Bool) {
            let output = ColorTransform.Layout(pixelFormat)
            if sixteenBits, pixelFormat == .rgb8 || pixelFormat == .rgba8,
                let wide = ColorTransform.toSRGB(from: space, .rgba16, to: output)
            {
                spngFormat = Int32(SPNG_FMT_RGBA16.rawValue)
                transform = wide
            } else {
                transform = ColorTransform.toSRGB(from: space, output, to: output)
            }
        }

        var isWide: Bool { spngFormat == Int32(SPNG_FMT_RGBA16.rawValue) }
        var decodedBytesPerPixel: Int { isWide ? 8 : pixelFormat.hasAlpha ? 4 : 3 }

        /// One row of `width` decoded pixels as the image keeps them, in
        /// `kept` (`width` pixels of ``pixelFormat``).
        func keep(_ decoded: UnsafeMutableBufferPointer<UInt8>, width: Int, into kept: UnsafeMutableBufferPointer<UInt8>) {
            guard let source = decoded.baseAddress, let target = kept.baseAddress else { return }
            if isWide {
                transform?.convert(source, into: target, count: width)
                return
            }
            if self.kept.count < decodedBytesPerPixel {
                PNGDecoder.keepChannels(UnsafeBufferPointer(decoded), stride: decodedBytesPerPixel, self.kept, into: kept)
                transform?.convert(target, into: target, count: width)
            } else if let transform {
                transform.convert(source, into: target, count: width)
            } else {
                target.update(from: source, count: width * decodedBytesPerPixel)
            }
        }
    }

    /// The colour space the file declares: iCCP, else none with sRGB, else
    /// gAMA and cHRM (browsers honour them without iCCP or sRGB).
    private static func colorSpace(_ context: OpaquePointer) -> DeclaredColorSpace? {
        var profile = spng_iccp()
        if spng_get_iccp(context, &profile) == 0, let bytes = profile.profile {
            return .icc(Data(bytes: bytes, count: profile.profile_len))
        }
        var intent: UInt8 = 0
        if spng_get_srgb(context, &intent) == 0 { return nil }
        var gamma: UInt32 = 0
        let hasGamma = spng_get_gama_int(context, &gamma) == 0
        var white = spng_chrm_int()
        let hasChromaticities = spng_get_chrm_int(context, &white) == 0
        guard hasGamma || hasChromaticities else { return nil }
        let chromaticities = [
            white.white_point_x, white.white_point_y, white.red_x, white.red_y, white.green_x, white.green_y, white.blue_x, white.blue_y,
        ]
        return .pngChunks(gamma: hasGamma ? Int(gamma) : nil, chromaticities: hasChromaticities ? chromaticities.map { Int($0) } : nil)
    }

    private func decodeWhole(_ context: OpaquePointer, width: Int, height: Int, layout: Layout) throws(ImageDecodingError) -> Image? {
        var size = 0
        try check(spng_decoded_image_size(context, layout.spngFormat, &size))
        var buffer = [UInt8](repeating: 0, count: size)
        try check(
            buffer.withUnsafeMutableBytes { output in
                spng_decode_image(context, output.baseAddress, output.count, layout.spngFormat, Int32(SPNG_DECODE_TRNS.rawValue))
            })
        if layout.isWide || layout.kept.count < layout.decodedBytesPerPixel || layout.transform != nil {
            let rowBytes = width * layout.pixelFormat.bytesPerPixel
            buffer = buffer.withUnsafeMutableBufferPointer { decoded in
                [UInt8](unsafeUninitializedCapacity: rowBytes * height) { kept, initialized in
                    let decodedRowBytes = width * layout.decodedBytesPerPixel
                    for row in 0..<height {
                        layout.keep(
                            UnsafeMutableBufferPointer(rebasing: decoded[(row * decodedRowBytes)..<((row + 1) * decodedRowBytes)]),
                            width: width,
                            into: UnsafeMutableBufferPointer(rebasing: kept[(row * rowBytes)..<((row + 1) * rowBytes)])
                        )
                    }
                    initialized = rowBytes * height
                }
            }
        }
        return Image(width: width, height: height, pixelFormat: layout.pixelFormat, pixels: buffer)
    }

    /// Streams the rows into the resampler: the memory is a few rows and the
    /// output, never the whole image (interlaced images, whose rows come in
    /// seven passes, are decoded whole).
    private func decodeScaled(
        _ context: OpaquePointer, width: Int, height: Int, layout: Layout, to size: ImageSize
    ) throws(ImageDecodingError) -> Image? {
        let flags = Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue)
        try check(spng_decode_image(context, nil, 0, layout.spngFormat, flags))
        let decoded = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: width * layout.decodedBytesPerPixel)
        let kept = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: width * layout.pixelFormat.bytesPerPixel)
        defer {
            decoded.deallocate()
            kept.deallocate()
        }
        var rowsRead = 0
        func nextRow() throws(ImageDecodingError) {
            let status = spng_decode_row(context, decoded.baseAddress, decoded.count)
            if status != Int32(SPNG_EOI.rawValue) { try check(status) }
            rowsRead += 1
        }
        let image = try ImageResizer.resize(width: width, height: height, pixelFormat: layout.pixelFormat, to: size) {
            (_: Int) throws(ImageDecodingError) -> UnsafeBufferPointer<UInt8> in
            try nextRow()
            layout.keep(decoded, width: width, into: kept)
            return UnsafeBufferPointer(kept)
        }
        // The resampler may not need the last rows; they are still read, checked.
        while rowsRead < height { try nextRow() }
        return image
    }

    /// Keeps the channels at `offsets` of each `stride`-byte pixel.
    static func keepChannels(_ pixels: [UInt8], stride: Int, _ offsets: [Int]) -> [UInt8] {
        let count = pixels.count / stride
        return [UInt8](unsafeUninitializedCapacity: count * offsets.count) { output, initialized in
            pixels.withUnsafeBufferPointer { keepChannels($0, stride: stride, offsets, into: output) }
            initialized = count * offsets.count
        }
    }

    static func keepChannels(_ source: UnsafeBufferPointer<UInt8>, stride: Int, _ offsets: [Int], into output: UnsafeMutableBufferPointer<UInt8>) {
        var target = 0
        for pixel in 0..<(source.count / stride) {
            for offset in offsets {
                output[target] = source[pixel * stride + offset]
                target += 1
            }
        }
    }

    private func check(_ status: Int32) throws(ImageDecodingError) {
        guard status != 0 else { return }
        throw ImageDecodingError(code: .corrupt, format: .png, detail: String(cString: spng_strerror(status)))
    }
}
