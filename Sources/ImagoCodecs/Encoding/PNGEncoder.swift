import CSpng
import Foundation

/// Encodes PNG with libspng, losslessly, in the image's own pixel format
/// (gray, gray + alpha, RGB or RGBA, 8 bits per sample).
public struct PNGEncoder: ImageEncoding {
    /// Creates a PNG encoder.
    public init() {}

    public var format: ImageFormat { .png }

    public func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        guard let context = spng_ctx_new(Int32(SPNG_CTX_ENCODER.rawValue)) else {
            throw ImageEncodingError(format: .png, detail: "libspng could not start")
        }
        defer { spng_ctx_free(context) }
        try check(spng_set_option(context, SPNG_ENCODE_TO_BUFFER, 1))
        let colorType: spng_color_type
        switch image.pixelFormat {
        case .gray8: colorType = SPNG_COLOR_TYPE_GRAYSCALE
        case .grayAlpha8: colorType = SPNG_COLOR_TYPE_GRAYSCALE_ALPHA
        case .rgb8: colorType = SPNG_COLOR_TYPE_TRUECOLOR
        case .rgba8: colorType = SPNG_COLOR_TYPE_TRUECOLOR_ALPHA
        }
        var header = spng_ihdr(
            width: UInt32(image.width), height: UInt32(image.height), bit_depth: 8, color_type: UInt8(colorType.rawValue),
            compression_method: 0, filter_method: 0, interlace_method: 0
        )
        try check(spng_set_ihdr(context, &header))
        // libspng takes rows packed; repack if the image has row padding.
        let rowBytes = image.width * image.pixelFormat.bytesPerPixel
        let packed =
            image.bytesPerRow == rowBytes
            ? image.pixels
            : (0..<image.height).flatMap { y in
                image.pixels[(y * image.bytesPerRow)..<(y * image.bytesPerRow + rowBytes)]
            }
        try check(
            packed.withUnsafeBytes { pixels in
                spng_encode_image(context, pixels.baseAddress, pixels.count, Int32(SPNG_FMT_PNG.rawValue), Int32(SPNG_ENCODE_FINALIZE.rawValue))
            })
        var length = 0
        var status: Int32 = 0
        guard let buffer = spng_get_png_buffer(context, &length, &status) else {
            throw ImageEncodingError(format: .png, detail: String(cString: spng_strerror(status)))
        }
        defer { free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    private func check(_ status: Int32) throws(ImageEncodingError) {
        guard status != 0 else { return }
        throw ImageEncodingError(format: .png, detail: String(cString: spng_strerror(status)))
    }
}
