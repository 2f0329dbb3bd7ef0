import CSpng
import Foundation

/// Decodes PNG with libspng: every colour type and bit depth, palettes,
/// tRNS transparency, 16-bit (reduced to 8) and interlaced images.
///
/// Output: gray without transparency ``Image/PixelFormat/gray8``; gray with
/// an alpha channel or tRNS ``Image/PixelFormat/grayAlpha8``; truecolour or
/// palette without transparency ``Image/PixelFormat/rgb8``; anything with
/// transparency ``Image/PixelFormat/rgba8``. Gamma (gAMA) is not applied:
/// the samples are returned as stored, as browsers without colour
/// management show them. CRC and zlib errors fail the decode.
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
        let layout = Layout(isGray: isGray, hasAlpha: hasAlpha)
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

    /// What libspng is asked for and what the image keeps of it.
    private struct Layout {
        var spngFormat: Int32
        var pixelFormat: Image.PixelFormat
        /// The channels kept of each decoded pixel (all of them for colour).
        var kept: [Int]

        init(isGray: Bool, hasAlpha: Bool) {
            spngFormat = Int32(hasAlpha ? SPNG_FMT_RGBA8.rawValue : SPNG_FMT_RGB8.rawValue)
            switch (isGray, hasAlpha) {
            case (true, false): (pixelFormat, kept) = (.gray8, [0])
            case (true, true): (pixelFormat, kept) = (.grayAlpha8, [0, 3])
            case (false, false): (pixelFormat, kept) = (.rgb8, [0, 1, 2])
            case (false, true): (pixelFormat, kept) = (.rgba8, [0, 1, 2, 3])
            }
        }

        var decodedChannels: Int { pixelFormat.hasAlpha ? 4 : 3 }
    }

    private func decodeWhole(_ context: OpaquePointer, width: Int, height: Int, layout: Layout) throws(ImageDecodingError) -> Image? {
        var size = 0
        try check(spng_decoded_image_size(context, layout.spngFormat, &size))
        var buffer = [UInt8](repeating: 0, count: size)
        try check(
            buffer.withUnsafeMutableBytes { output in
                spng_decode_image(context, output.baseAddress, output.count, layout.spngFormat, Int32(SPNG_DECODE_TRNS.rawValue))
            })
        if layout.kept.count < layout.decodedChannels {
            buffer = Self.keepChannels(buffer, stride: layout.decodedChannels, layout.kept)
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
        let decoded = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: width * layout.decodedChannels)
        let kept = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: width * layout.kept.count)
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
            guard layout.kept.count < layout.decodedChannels else { return UnsafeBufferPointer(decoded) }
            Self.keepChannels(UnsafeBufferPointer(decoded), stride: layout.decodedChannels, layout.kept, into: kept)
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
