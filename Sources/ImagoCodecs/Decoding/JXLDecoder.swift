import CJxl
import Foundation

/// Decodes JPEG XL with libjxl, single-threaded, 8 bits per channel: still
/// images, and the first frame of an animation.
///
/// Output: ``Image/PixelFormat/gray8`` or ``Image/PixelFormat/grayAlpha8``
/// for gray images, ``Image/PixelFormat/rgb8`` or ``Image/PixelFormat/rgba8``
/// otherwise. The orientation in the header is applied, so the image comes
/// out upright. libjxl (0.7 on Debian 12) has no scaled decoding: images are
/// decoded whole and resampled to the target size. Colours other than sRGB
/// are converted to it from the profile libjxl gives for its pixels, unless
/// ``ImageDecodingOptions/convertsToSRGB`` is off.
public struct JXLDecoder: ImageDecoding {
    /// Creates a JPEG XL decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .jxl }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        guard let decoder = JxlDecoderCreate(nil) else {
            throw ImageDecodingError(code: .corrupt, format: .jxl, detail: "libjxl could not start")
        }
        defer { JxlDecoderDestroy(decoder) }
        let bytes = PinnedBytes(data)
        let events = Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FULL_IMAGE.rawValue)
        guard JxlDecoderSubscribeEvents(decoder, events) == JXL_DEC_SUCCESS,
            JxlDecoderSetInput(decoder, bytes.baseAddress.assumingMemoryBound(to: UInt8.self), bytes.count) == JXL_DEC_SUCCESS
        else {
            throw ImageDecodingError(code: .corrupt, format: .jxl, detail: "libjxl refused the input")
        }
        // The input is not closed: with all of it given, libjxl asking for
        // more means the data is truncated (a closed input gives a bare error).
        let layout = try Layout(decoder, options: options)
        var failure: ImageDecodingError?
        let pixels = [UInt8](unsafeUninitializedCapacity: layout.byteCount) { buffer, initialized in
            do throws(ImageDecodingError) {
                try layout.decodeFrame(decoder, into: UnsafeMutableRawBufferPointer(buffer))
                initialized = buffer.count
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        guard let image = Image(width: layout.width, height: layout.height, pixelFormat: layout.pixelFormat, pixels: pixels) else {
            throw ImageDecodingError(code: .corrupt, format: .jxl, detail: "inconsistent sizes")
        }
        // Scaled first: fewer pixels to convert.
        return options.scaled(image).convertedToSRGB(from: options.convertsToSRGB ? layout.colorSpace : nil)
    }

    /// The image's size and layout, from the basic info, and the colour
    /// space of the pixels libjxl gives.
    private struct Layout {
        var width: Int
        var height: Int
        var pixelFormat: Image.PixelFormat
        var colorSpace: DeclaredColorSpace?

        var byteCount: Int { width * height * pixelFormat.bytesPerPixel }

        /// Runs the decoder up to the basic info and checks the limits
        /// before any pixel is allocated.
        init(_ decoder: OpaquePointer, options: ImageDecodingOptions) throws(ImageDecodingError) {
            try Self.run(decoder, until: JXL_DEC_BASIC_INFO)
            var info = JxlBasicInfo()
            guard JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else {
                throw ImageDecodingError(code: .corrupt, format: .jxl, detail: "unreadable header")
            }
            // With the default orientation handling these are the upright sizes.
            width = Int(info.xsize)
            height = Int(info.ysize)
            try options.checkPixelCount(width: width, height: height, format: .jxl)
            pixelFormat =
                switch (info.num_color_channels == 1, info.alpha_bits > 0) {
                case (true, false): .gray8
                case (true, true): .grayAlpha8
                case (false, false): .rgb8
                case (false, true): .rgba8
                }
            try Self.run(decoder, until: JXL_DEC_COLOR_ENCODING)
            colorSpace = Self.colorSpace(decoder)
        }

        /// The pixels' colour space: nil for sRGB (or sRGB's curve on gray),
        /// else the ICC profile libjxl gives for them.
        static func colorSpace(_ decoder: OpaquePointer) -> DeclaredColorSpace? {
            var encoding = JxlColorEncoding()
            if JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS,
                encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB, encoding.white_point == JXL_WHITE_POINT_D65,
                encoding.color_space == JXL_COLOR_SPACE_GRAY || encoding.primaries == JXL_PRIMARIES_SRGB
            {
                return nil
            }
            var size = 0
            guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS,
                size > 0, size <= ImageMetadata.maximumBlockSize
            else { return nil }
            var profile = Data(count: size)
            let status = profile.withUnsafeMutableBytes {
                JxlDecoderGetColorAsICCProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), size)
            }
            return status == JXL_DEC_SUCCESS ? .icc(profile) : nil
        }

        /// Runs the decoder through the first frame, into `buffer`, which must
        /// hold the whole image: libjxl asks for the buffer's size first.
        func decodeFrame(_ decoder: OpaquePointer, into buffer: UnsafeMutableRawBufferPointer) throws(ImageDecodingError) {
            var format = JxlPixelFormat(
                num_channels: UInt32(pixelFormat.bytesPerPixel), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0
            )
            try Self.run(decoder, until: JXL_DEC_NEED_IMAGE_OUT_BUFFER)
            var size = 0
            guard JxlDecoderImageOutBufferSize(decoder, &format, &size) == JXL_DEC_SUCCESS, size == buffer.count,
                JxlDecoderSetImageOutBuffer(decoder, &format, buffer.baseAddress, buffer.count) == JXL_DEC_SUCCESS
            else {
                throw ImageDecodingError(code: .corrupt, format: .jxl, detail: "inconsistent sizes")
            }
            try Self.run(decoder, until: JXL_DEC_FULL_IMAGE)
        }

        /// Processes input until libjxl reports `event`; anything else it
        /// asks for at this point is an error.
        static func run(_ decoder: OpaquePointer, until event: JxlDecoderStatus) throws(ImageDecodingError) {
            let status = JxlDecoderProcessInput(decoder)
            guard status != event else { return }
            let detail =
                switch status {
                case JXL_DEC_NEED_MORE_INPUT: "truncated data"
                case JXL_DEC_ERROR: "libjxl could not decode the data"
                case JXL_DEC_SUCCESS: "no image in the data"
                default: "unexpected libjxl event \(status.rawValue)"
                }
            throw ImageDecodingError(code: .corrupt, format: .jxl, detail: detail)
        }
    }
}
