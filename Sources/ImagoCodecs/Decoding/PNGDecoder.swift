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
        let width = Int(header.width), height = Int(header.height)
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
        let format = Int32(hasAlpha ? SPNG_FMT_RGBA8.rawValue : SPNG_FMT_RGB8.rawValue)
        var size = 0
        try check(spng_decoded_image_size(context, format, &size))
        var buffer = [UInt8](repeating: 0, count: size)
        try check(buffer.withUnsafeMutableBytes { output in
            spng_decode_image(context, output.baseAddress, output.count, format, Int32(SPNG_DECODE_TRNS.rawValue))
        })
        // The image can be complete before the last IDAT chunk's CRC is read:
        // read on to IEND so that a damaged chunk is still caught.
        try check(spng_decode_chunks(context))
        let pixelFormat: Image.PixelFormat
        switch (isGray, hasAlpha) {
        case (true, false):
            buffer = Self.keepChannels(buffer, stride: 3, [0])
            pixelFormat = .gray8
        case (true, true):
            buffer = Self.keepChannels(buffer, stride: 4, [0, 3])
            pixelFormat = .grayAlpha8
        case (false, false): pixelFormat = .rgb8
        case (false, true): pixelFormat = .rgba8
        }
        guard let image = Image(width: width, height: height, pixelFormat: pixelFormat, pixels: buffer) else {
            throw ImageDecodingError(code: .corrupt, format: .png, detail: "inconsistent sizes")
        }
        return image
    }

    /// Keeps the channels at `offsets` of each `stride`-byte pixel.
    static func keepChannels(_ pixels: [UInt8], stride: Int, _ offsets: [Int]) -> [UInt8] {
        let count = pixels.count / stride
        return [UInt8](unsafeUninitializedCapacity: count * offsets.count) { output, initialized in
            pixels.withUnsafeBufferPointer { source in
                var target = 0
                for pixel in 0..<count {
                    for offset in offsets {
                        output[target] = source[pixel * stride + offset]
                        target += 1
                    }
                }
            }
            initialized = count * offsets.count
        }
    }

    private func check(_ status: Int32) throws(ImageDecodingError) {
        guard status != 0 else { return }
        throw ImageDecodingError(code: .corrupt, format: .png, detail: String(cString: spng_strerror(status)))
    }
}
