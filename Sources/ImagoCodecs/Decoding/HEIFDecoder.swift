import CHeif
import Foundation

/// Decodes HEIC (HEVC in HEIF) with libheif and libde265: the primary
/// image, with the file's rotation, mirroring and cropping applied.
///
/// Output: ``Image/PixelFormat/rgba8`` when the image has alpha,
/// ``Image/PixelFormat/rgb8`` otherwise. HEIF has no scaled decoding, so
/// images are decoded whole and resampled. Image sequences decode as their
/// primary (still) image. With ``ImageDecodingOptions/prefersEmbeddedThumbnail``
/// the primary image's first thumbnail is decoded instead, if it has one.
/// Colours are converted to sRGB from the ICC profile or the nclx code
/// points (images deeper than 8 bits at 16 bits, before they are reduced),
/// unless ``ImageDecodingOptions/convertsToSRGB`` is off.
public struct HEIFDecoder: ImageDecoding {
    /// Creates a HEIF decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .heic }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try Self.checkCanvases(of: data, options: options)
        // A thumbnail that does not decode is passed over for the primary image.
        if options.prefersEmbeddedThumbnail, let thumbnail = try? Self.decodeThumbnail(of: data, options: options) { return thumbnail }
        return try Self.withPrimaryImage(of: data) { _, handle throws(ImageDecodingError) in try Self.decode(handle, options: options) }
    }

    /// The first thumbnail embedded for the primary image, decoded; nil if
    /// there is none. AVIF files are read too, when libheif has an AV1 decoder.
    static func decodeThumbnail(of data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image? {
        try checkCanvases(of: data, options: options)
        return try withPrimaryImage(of: data) { _, handle throws(ImageDecodingError) -> Image? in
            var id: heif_item_id = 0
            guard heif_image_handle_get_list_of_thumbnail_IDs(handle, &id, 1) == 1 else { return nil }
            var thumbnail: OpaquePointer?
            try check(heif_image_handle_get_thumbnail(handle, id, &thumbnail))
            guard let thumbnail else { return nil }
            defer { heif_image_handle_release(thumbnail) }
            return try decode(thumbnail, options: options)
        }
    }

    /// Refuses a file with a grid or overlay larger than the pixel limit,
    /// which libheif would allocate before decoding any of it (``HEIFCanvases``).
    private static func checkCanvases(of data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) {
        for canvas in HEIFCanvases.sizes(in: data) {
            try options.checkPixelCount(width: canvas.width, height: canvas.height, format: .heic)
        }
    }

    /// Runs `body` with the handle of `data`'s primary image, read by libheif.
    static func withPrimaryImage<Output>(
        of data: Data, _ body: (_ context: OpaquePointer, _ handle: OpaquePointer) throws(ImageDecodingError) -> Output
    ) throws(ImageDecodingError) -> Output {
        // libheif follows item references by recursion: a loop would overflow the stack.
        if let problem = HEIFItemReferences.problem(in: data) { throw ImageDecodingError(code: .corrupt, format: .heic, detail: problem) }
        guard let context = heif_context_alloc() else {
            throw ImageDecodingError(code: .corrupt, format: .heic, detail: "libheif could not start")
        }
        defer { heif_context_free(context) }
        // Tiles are decoded on the calling thread, which is already a decode thread.
        heif_context_set_max_decoding_threads(context, 0)
        let result = data.withUnsafeBytes { bytes -> Result<Output, ImageDecodingError> in
            Result { () throws(ImageDecodingError) in
                try check(heif_context_read_from_memory_without_copy(context, bytes.baseAddress, bytes.count, nil))
                var handle: OpaquePointer?
                try check(heif_context_get_primary_image_handle(context, &handle))
                guard let handle else { throw ImageDecodingError(code: .corrupt, format: .heic, detail: "no primary image") }
                defer { heif_image_handle_release(handle) }
                return try body(context, handle)
            }
        }
        return try result.get()
    }

    private static func decode(_ handle: OpaquePointer, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        try options.checkPixelCount(
            width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)), format: .heic
        )
        let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
        let space = options.convertsToSRGB ? colorSpace(of: handle) : nil
        // Deeper than 8 bits and converted: at 16 bits, so that the
        // conversion reduces to 8 bits with nothing lost before it.
        let wide =
            heif_image_handle_get_luma_bits_per_pixel(handle) > 8
            ? space.flatMap { ColorTransform.toSRGB(from: $0, hasAlpha ? .rgba16 : .rgb16, to: hasAlpha ? .rgba8 : .rgb8) } : nil
        let chroma =
            wide == nil
            ? (hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB)
            : (hasAlpha ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RRGGBB_LE)
        var decoded: OpaquePointer?
        try check(heif_decode_image(handle, &decoded, heif_colorspace_RGB, chroma, nil))
        guard let decoded else { throw ImageDecodingError(code: .corrupt, format: .heic, detail: "no pixels") }
        defer { heif_image_release(decoded) }
        let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
        let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
        // A grid image decodes to the size its grid declares, which libheif
        // 1.15 does not check against the size checked above.
        try options.checkPixelCount(width: width, height: height, format: .heic)
        // Nor does it check the coded size (in the HEVC parameter sets)
        // against the declared one: a damaged file decodes to a larger
        // image whose undecoded parts are memory libheif never wrote.
        let declared = (Int(heif_image_handle_get_width(handle)), Int(heif_image_handle_get_height(handle)))
        guard declared == (width, height) else {
            throw ImageDecodingError(
                code: .corrupt, format: .heic, detail: "decodes to \(width)x\(height), declares \(declared.0)x\(declared.1)"
            )
        }
        var stride: Int32 = 0
        guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride) else {
            throw ImageDecodingError(code: .corrupt, format: .heic, detail: "no pixels")
        }
        let rowBytes = width * (hasAlpha ? 4 : 3)
        let storedRowBytes = wide == nil ? rowBytes : rowBytes * 2
        guard Int(stride) >= storedRowBytes else { throw ImageDecodingError(code: .corrupt, format: .heic, detail: "inconsistent sizes") }
        let bits = Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved))
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { output, initialized in
            guard let base = output.baseAddress else { return }
            if let wide {
                var row = [UInt16](repeating: 0, count: rowBytes)
                for y in 0..<height {
                    Self.widen(plane + y * Int(stride), bits: bits, into: &row)
                    row.withUnsafeBytes { wide.convert($0.baseAddress!, into: base + y * rowBytes, count: width) }
                }
            } else {
                for y in 0..<height { (base + y * rowBytes).initialize(from: plane + y * Int(stride), count: rowBytes) }
            }
            initialized = rowBytes * height
        }
        guard let image = Image(width: width, height: height, pixelFormat: hasAlpha ? .rgba8 : .rgb8, pixels: pixels) else {
            throw ImageDecodingError(code: .corrupt, format: .heic, detail: "inconsistent sizes")
        }
        guard wide == nil, let space else { return image }
        // Scaled first: fewer pixels to convert.
        return options.scaled(image).convertedToSRGB(from: space)
    }

    /// A row of little-endian samples of `bits` bits scaled to the whole
    /// 16-bit range, as lcms takes them.
    private static func widen(_ samples: UnsafePointer<UInt8>, bits: Int, into row: inout [UInt16]) {
        let largest = UInt32((1 << min(16, max(1, bits))) - 1)
        for index in row.indices {
            let value = min(largest, UInt32(samples[2 * index]) | UInt32(samples[2 * index + 1]) << 8)
            row[index] = UInt16((value * 65_535 + largest / 2) / largest)
        }
    }

    /// The image's colour: its ICC profile (prof or rICC), else its nclx
    /// code points (an iPhone's Display P3 comes as nclx).
    static func colorSpace(of handle: OpaquePointer) -> DeclaredColorSpace? {
        if let profile = iccProfile(of: handle) { return .icc(profile) }
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        guard heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx else { return nil }
        defer { heif_nclx_color_profile_free(nclx) }
        return .cicp(primaries: Int(nclx.pointee.color_primaries.rawValue), transfer: Int(nclx.pointee.transfer_characteristics.rawValue))
    }

    /// The image's ICC profile, unless it is larger than ``ImageMetadata/maximumBlockSize``.
    static func iccProfile(of handle: OpaquePointer) -> Data? {
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0, size <= ImageMetadata.maximumBlockSize else { return nil }
        var profile = Data(count: size)
        let status = profile.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(handle, $0.baseAddress) }
        return status.code == heif_error_Ok ? profile : nil
    }

    private static func check(_ error: heif_error) throws(ImageDecodingError) {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)"
        throw ImageDecodingError(code: .corrupt, format: .heic, detail: message)
    }
}
