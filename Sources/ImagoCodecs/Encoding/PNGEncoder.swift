import CSpng
import Foundation

/// Encodes PNG with libspng, losslessly, in the image's own pixel format
/// (gray, gray + alpha, RGB or RGBA, 8 bits per sample).
public struct PNGEncoder: ImageEncoding {
    /// What is written besides the pixels (EXIF in eXIf, XMP in iTXt, the
    /// ICC profile in iCCP; PNG has no place for IPTC). Default: nothing.
    public var metadata: ImageMetadata

    /// Creates a PNG encoder.
    public init(metadata: ImageMetadata = ImageMetadata()) {
        self.metadata = metadata
    }

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
        let metadataBytes = try setMetadata(context)
        defer { for buffer in metadataBytes { buffer.deallocate() } }
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

    /// Hands libspng the metadata chunks. It keeps pointers to their
    /// bytes until it writes them, so they are copied into memory that
    /// the caller frees after the encode (the returned pointers).
    private func setMetadata(_ context: OpaquePointer) throws(ImageEncodingError) -> [UnsafeMutableRawPointer] {
        var kept: [UnsafeMutableRawPointer] = []
        /// A copy of `bytes` ending in a zero, as a C string pointer.
        func copy(_ bytes: Data) -> UnsafeMutablePointer<CChar> {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: bytes.count + 1, alignment: 1)
            kept.append(buffer)
            bytes.copyBytes(to: buffer.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            buffer.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
            return buffer.assumingMemoryBound(to: CChar.self)
        }
        do throws(ImageEncodingError) {
            if let profile = metadata.iccProfile {
                var chunk = spng_iccp()
                withUnsafeMutableBytes(of: &chunk.profile_name) { name in name.copyBytes(from: "ICC Profile".utf8) }
                chunk.profile_len = profile.count
                chunk.profile = copy(profile)
                try check(spng_set_iccp(context, &chunk))
            }
            if let exif = metadata.exif {
                var chunk = spng_exif(length: exif.count, data: copy(exif))
                try check(spng_set_exif(context, &chunk))
            }
            if let xmp = metadata.xmp {
                var text = spng_text()
                withUnsafeMutableBytes(of: &text.keyword) { keyword in keyword.copyBytes(from: "XML:com.adobe.xmp".utf8) }
                text.type = Int32(SPNG_ITXT.rawValue)
                text.length = xmp.count
                text.text = copy(xmp)
                text.language_tag = copy(Data())
                text.translated_keyword = text.language_tag
                try check(spng_set_text(context, &text, 1))
            }
        } catch {
            for buffer in kept { buffer.deallocate() }
            throw error
        }
        return kept
    }

    private func check(_ status: Int32) throws(ImageEncodingError) {
        guard status != 0 else { return }
        throw ImageEncodingError(format: .png, detail: String(cString: spng_strerror(status)))
    }
}
