import CAvif
import CGif
import CHeif
import CJxl
import CWebP
import Foundation
import ImagoCodecs

/// Test images in the formats Imago decodes but does not write, made with
/// the codecs' own encoders, so no binary files live in the repository.
/// Shared by the unit tests and the fuzzers' seed generator (`Fuzz/`).
///
/// ```swift
/// let data = try FormatFixtures.webp(FormatFixtures.quadrants(alpha: true), lossless: true)
/// ```
public enum FormatFixtures {
    /// An encoder refused the fixture; `description` says which step.
    public struct Failure: Error, CustomStringConvertible {
        /// The step that failed and the codec's message.
        public var description: String
    }

    /// Four flat quadrants (red, green, blue, white); with `alpha`, the white
    /// one is half transparent. Flat areas survive lossy codecs closely.
    public static func quadrants(width: Int = 64, height: Int = 48, alpha: Bool = false) -> Image {
        let channels = alpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                let color = quadrantColor(x: x, y: y, width: width, height: height, alpha: alpha)
                for channel in 0..<channels { pixels[(y * width + x) * channels + channel] = color[channel] }
            }
        }
        return Image(width: width, height: height, pixelFormat: alpha ? .rgba8 : .rgb8, pixels: pixels)!
    }

    /// The colour ``quadrants(width:height:alpha:)`` draws at a point, RGBA.
    public static func quadrantColor(x: Int, y: Int, width: Int, height: Int, alpha: Bool = false) -> [UInt8] {
        switch (x < width / 2, y < height / 2) {
        case (true, true): [255, 0, 0, 255]
        case (false, true): [0, 255, 0, 255]
        case (true, false): [0, 0, 255, 255]
        case (false, false): [255, 255, 255, alpha ? 128 : 255]
        }
    }

    /// A pixel of `image` as RGBA (alpha 255 when it has none).
    public static func rgba(_ image: Image, x: Int, y: Int) -> [UInt8] {
        let channels = image.pixelFormat.bytesPerPixel
        let base = y * image.bytesPerRow + x * channels
        let values = Array(image.pixels[base..<(base + channels)])
        switch image.pixelFormat {
        case .gray8: return [values[0], values[0], values[0], 255]
        case .grayAlpha8: return [values[0], values[0], values[0], values[1]]
        case .rgb8: return values + [255]
        case .rgba8: return values
        }
    }

    /// Whether every channel of the quadrants' centres is within `tolerance`.
    public static func showsQuadrants(_ image: Image, alpha: Bool = false, tolerance: Int = 12) -> Bool {
        let points = [(1, 1), (3, 1), (1, 3), (3, 3)].map { (image.width * $0.0 / 4, image.height * $0.1 / 4) }
        return points.allSatisfy { x, y in
            let expected = quadrantColor(x: x, y: y, width: image.width, height: image.height, alpha: alpha)
            return zip(rgba(image, x: x, y: y), expected).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
        }
    }

    // MARK: - WebP (stills: WebPEncoder)

    /// A lossless animated WebP of RGBA `frames`, each shown `durationMS`.
    public static func animatedWebP(_ frames: [Image], durationMS: Int, loopCount: Int) throws -> Data {
        var options = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&options) != 0 else { throw Failure(description: "libwebpmux version") }
        options.anim_params.loop_count = Int32(loopCount)
        guard let first = frames.first, let encoder = WebPAnimEncoderNew(Int32(first.width), Int32(first.height), &options) else {
            throw Failure(description: "WebPAnimEncoderNew failed")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw Failure(description: "WebPConfigInit failed") }
        config.lossless = 1
        for (index, frame) in frames.enumerated() {
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw Failure(description: "WebPPictureInit failed") }
            picture.width = Int32(frame.width)
            picture.height = Int32(frame.height)
            picture.use_argb = 1
            defer { WebPPictureFree(&picture) }
            let imported = frame.pixels.withUnsafeBufferPointer { WebPPictureImportRGBA(&picture, $0.baseAddress, Int32(frame.bytesPerRow)) }
            guard imported != 0, WebPAnimEncoderAdd(encoder, &picture, Int32(index * durationMS), &config) != 0 else {
                throw Failure(description: "adding frame \(index) failed")
            }
        }
        guard WebPAnimEncoderAdd(encoder, nil, Int32(frames.count * durationMS), nil) != 0 else {
            throw Failure(description: "closing the animation failed")
        }
        var assembled = WebPData()
        guard WebPAnimEncoderAssemble(encoder, &assembled) != 0, let bytes = assembled.bytes else {
            throw Failure(description: "WebPAnimEncoderAssemble failed")
        }
        defer { WebPFree(UnsafeMutableRawPointer(mutating: bytes)) }
        return Data(bytes: bytes, count: assembled.size)
    }

    // MARK: - GIF

    /// One GIF frame: palette indices for a rectangle of the screen.
    public struct GIFFrame {
        /// The frame's position on the screen.
        public var left: Int
        /// The frame's position on the screen.
        public var top: Int
        /// The frame's size.
        public var width: Int
        /// The frame's size.
        public var height: Int
        /// Palette indices, `width * height` of them, row by row.
        public var indices: [UInt8]
        /// How long the frame is shown.
        public var delayCentiseconds: Int
        /// What happens to the frame's area before the next one is drawn.
        public var disposal: Int32
        /// The palette index drawn as transparent; -1 for none.
        public var transparentIndex: Int32
        /// Whether the rows are stored interlaced.
        public var interlaced: Bool

        /// Creates a frame.
        public init(
            left: Int = 0, top: Int = 0, width: Int, height: Int, indices: [UInt8], delayCentiseconds: Int = 10,
            disposal: Int32 = Int32(DISPOSE_DO_NOT), transparentIndex: Int32 = -1, interlaced: Bool = false
        ) {
            self.left = left
            self.top = top
            self.width = width
            self.height = height
            self.indices = indices
            self.delayCentiseconds = delayCentiseconds
            self.disposal = disposal
            self.transparentIndex = transparentIndex
            self.interlaced = interlaced
        }
    }

    /// A GIF89a with a global `palette` (RGB triples, a power of two of them).
    public static func gif(width: Int, height: Int, palette: [(UInt8, UInt8, UInt8)], frames: [GIFFrame], loopCount: Int? = nil) throws -> Data {
        final class Output { var data = Data() }
        let output = Output()
        var status: Int32 = 0
        let write: OutputFunc = { file, bytes, count in
            guard let file, let bytes, let user = file.pointee.UserData else { return 0 }
            Unmanaged<Output>.fromOpaque(user).takeUnretainedValue().data.append(bytes, count: Int(count))
            return count
        }
        guard let file = withExtendedLifetime(output, { EGifOpen(Unmanaged.passUnretained(output).toOpaque(), write, &status) }) else {
            throw Failure(description: "EGifOpen failed: \(status)")
        }
        func check(_ result: Int32, _ step: String) throws {
            guard result == GIF_OK else { throw Failure(description: "\(step) failed: \(file.pointee.Error)") }
        }
        EGifSetGifVersion(file, true)
        let colors = palette.map { GifColorType(Red: $0.0, Green: $0.1, Blue: $0.2) }
        let map = GifMakeMapObject(Int32(colors.count), colors)
        defer { GifFreeMapObject(map) }
        try check(EGifPutScreenDesc(file, Int32(width), Int32(height), 8, 0, map), "screen")
        if let loopCount {
            try check(EGifPutExtensionLeader(file, APPLICATION_EXT_FUNC_CODE), "loop leader")
            try check(EGifPutExtensionBlock(file, 11, Array("NETSCAPE2.0".utf8)), "loop name")
            try check(EGifPutExtensionBlock(file, 3, [1, UInt8(loopCount & 0xFF), UInt8(loopCount >> 8)]), "loop count")
            try check(EGifPutExtensionTrailer(file), "loop trailer")
        }
        for frame in frames {
            var control = GraphicsControlBlock(
                DisposalMode: frame.disposal, UserInputFlag: false, DelayTime: Int32(frame.delayCentiseconds),
                TransparentColor: frame.transparentIndex
            )
            var extensionBytes = [UInt8](repeating: 0, count: 4)
            let length = EGifGCBToExtension(&control, &extensionBytes)
            try check(EGifPutExtension(file, GRAPHICS_EXT_FUNC_CODE, Int32(length), extensionBytes), "control")
            try check(
                EGifPutImageDesc(file, Int32(frame.left), Int32(frame.top), Int32(frame.width), Int32(frame.height), frame.interlaced, nil),
                "descriptor")
            for row in GIFReader.rowOrder(height: frame.height, interlaced: frame.interlaced) {
                var line = Array(frame.indices[(row * frame.width)..<((row + 1) * frame.width)])
                try check(EGifPutLine(file, &line, Int32(frame.width)), "line")
            }
        }
        try check(EGifCloseFile(file, &status), "close")
        return output.data
    }

    /// A GIF image's data for `indices` (its code size, 8, then its
    /// sub-blocks and their terminator) that any LZW decoder reads and no
    /// encoder under test wrote: a clear code, every index as a literal,
    /// the end code, 9-bit codes packed from the least significant bit, a
    /// new table every 250 literals, before the codes would widen to 10 bits.
    public static func uncompressedGIFImageData(_ indices: [UInt8]) -> [UInt8] {
        var codes: [Int] = []
        for (offset, index) in indices.enumerated() {
            if offset % 250 == 0 { codes.append(256) }
            codes.append(Int(index))
        }
        codes.append(257)
        var packed: [UInt8] = []
        var bits = 0
        var bitCount = 0
        for code in codes {
            bits |= code << bitCount
            bitCount += 9
            while bitCount >= 8 {
                packed.append(UInt8(bits & 0xFF))
                bits >>= 8
                bitCount -= 8
            }
        }
        if bitCount > 0 { packed.append(UInt8(bits & 0xFF)) }
        var data: [UInt8] = [8]
        for start in stride(from: 0, to: packed.count, by: 255) {
            let block = packed[start..<min(packed.count, start + 255)]
            data += [UInt8(block.count)] + block
        }
        return data + [0]
    }

    /// A GIF89a with no colour table at all (giflib will not write one):
    /// one frame of 8-bit palette `indices` covering the screen.
    public static func gifWithoutColorTables(width: Int, height: Int, indices: [UInt8]) -> Data {
        func littleEndian16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        var data = Array("GIF89a".utf8) + littleEndian16(width) + littleEndian16(height) + [0, 0, 0]
        data += [0x2C] + littleEndian16(0) + littleEndian16(0) + littleEndian16(width) + littleEndian16(height) + [0]
        return Data(data + uncompressedGIFImageData(indices) + [0x3B])
    }

    // MARK: - AVIF

    /// An AVIF (still, or a sequence of `images` shown `durationSeconds` each).
    /// `quarterTurns` (anti-clockwise) and `mirrorMode` (0 top-bottom, 1
    /// left-right) write irot and imir boxes that a viewer must apply.
    /// `crop` writes a clean aperture (clap) box for that rectangle; the
    /// chroma is then subsampled 4:2:0, so that an odd offset is one that
    /// libavif's strict checks refuse. `cicp` labels the colours with
    /// those code points (H.273 colour primaries and transfer), `depth` is
    /// the bits per channel coded (8, 10 or 12).
    public static func avif(
        _ images: [Image], durationSeconds: Double = 0.1, quarterTurns: UInt8 = 0, mirrorMode: UInt8? = nil,
        crop: (x: Int, y: Int, width: Int, height: Int)? = nil, cicp: (primaries: UInt16, transfer: UInt16)? = nil, depth: UInt32 = 8
    ) throws -> Data {
        guard let encoder = avifEncoderCreate() else { throw Failure(description: "avifEncoderCreate failed") }
        defer { avifEncoderDestroy(encoder) }
        encoder.pointee.speed = 10
        encoder.pointee.maxThreads = 1
        encoder.pointee.minQuantizer = 4
        encoder.pointee.maxQuantizer = 8
        encoder.pointee.timescale = 1000
        let flags = images.count == 1 ? avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue) : avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_NONE.rawValue)
        for image in images {
            let chroma = crop == nil ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420
            guard let avifImage = avifImageCreate(UInt32(image.width), UInt32(image.height), depth, chroma) else {
                throw Failure(description: "avifImageCreate failed")
            }
            defer { avifImageDestroy(avifImage) }
            if let cicp {
                avifImage.pointee.colorPrimaries = cicp.primaries
                avifImage.pointee.transferCharacteristics = cicp.transfer
            }
            if let crop {
                // The box gives the crop's size and its centre's offset from
                // the image's centre, in halves of a pixel.
                avifImage.pointee.transformFlags |= avifTransformFlags(AVIF_TRANSFORM_CLAP.rawValue)
                avifImage.pointee.clap = avifCleanApertureBox(
                    widthN: UInt32(crop.width), widthD: 1, heightN: UInt32(crop.height), heightD: 1,
                    horizOffN: UInt32(bitPattern: Int32(2 * crop.x + crop.width - image.width)), horizOffD: 2,
                    vertOffN: UInt32(bitPattern: Int32(2 * crop.y + crop.height - image.height)), vertOffD: 2
                )
            }
            if quarterTurns != 0 {
                avifImage.pointee.transformFlags |= avifTransformFlags(AVIF_TRANSFORM_IROT.rawValue)
                avifImage.pointee.irot.angle = quarterTurns
            }
            if let mirrorMode {
                avifImage.pointee.transformFlags |= avifTransformFlags(AVIF_TRANSFORM_IMIR.rawValue)
                avifImage.pointee.imir.mode = mirrorMode
            }
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, avifImage)
            rgb.format = image.pixelFormat == .rgba8 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
            rgb.depth = 8
            rgb.rowBytes = UInt32(image.bytesPerRow)
            var pixels = image.pixels
            let converted = pixels.withUnsafeMutableBufferPointer { buffer in
                rgb.pixels = buffer.baseAddress
                return avifImageRGBToYUV(avifImage, &rgb)
            }
            guard converted == AVIF_RESULT_OK else { throw Failure(description: "avifImageRGBToYUV failed") }
            let added = avifEncoderAddImage(encoder, avifImage, UInt64(durationSeconds * 1000), flags)
            guard added == AVIF_RESULT_OK else { throw Failure(description: String(cString: avifResultToString(added))) }
        }
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        let finished = avifEncoderFinish(encoder, &output)
        guard finished == AVIF_RESULT_OK, let bytes = output.data else {
            throw Failure(description: String(cString: avifResultToString(finished)))
        }
        return Data(bytes: bytes, count: output.size)
    }

    // MARK: - JPEG XL

    /// A lossless JPEG XL of a gray, RGB or RGBA `image`, fastest effort;
    /// `orientation` (EXIF's 1-8) goes in the header for a viewer to apply,
    /// `container` wraps the codestream in the ISOBMFF container.
    public static func jxl(_ image: Image, orientation: UInt32 = 1, container: Bool = false) throws -> Data {
        guard let encoder = JxlEncoderCreate(nil) else { throw Failure(description: "JxlEncoderCreate failed") }
        defer { JxlEncoderDestroy(encoder) }
        let gray = image.pixelFormat == .gray8 || image.pixelFormat == .grayAlpha8
        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(image.width)
        info.ysize = UInt32(image.height)
        info.bits_per_sample = 8
        info.num_color_channels = gray ? 1 : 3
        info.num_extra_channels = image.pixelFormat.hasAlpha ? 1 : 0
        info.alpha_bits = image.pixelFormat.hasAlpha ? 8 : 0
        info.uses_original_profile = 1
        info.orientation = JxlOrientation(rawValue: orientation)
        var color = JxlColorEncoding()
        JxlColorEncodingSetToSRGB(&color, gray ? 1 : 0)
        guard JxlEncoderUseContainer(encoder, container ? 1 : 0) == JXL_ENC_SUCCESS,
            JxlEncoderSetBasicInfo(encoder, &info) == JXL_ENC_SUCCESS,
            JxlEncoderSetColorEncoding(encoder, &color) == JXL_ENC_SUCCESS,
            let settings = JxlEncoderFrameSettingsCreate(encoder, nil),
            JxlEncoderSetFrameLossless(settings, 1) == JXL_ENC_SUCCESS,
            JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, 1) == JXL_ENC_SUCCESS
        else { throw Failure(description: "libjxl refused the settings") }
        var format = JxlPixelFormat(
            num_channels: UInt32(image.pixelFormat.bytesPerPixel), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        let added = image.pixels.withUnsafeBytes { JxlEncoderAddImageFrame(settings, &format, $0.baseAddress, $0.count) }
        guard added == JXL_ENC_SUCCESS else { throw Failure(description: "JxlEncoderAddImageFrame failed") }
        JxlEncoderCloseInput(encoder)
        var output = [UInt8](repeating: 0, count: 1 << 16)
        var written = 0
        while true {
            var available = output.count - written
            let status = output.withUnsafeMutableBufferPointer { buffer -> JxlEncoderStatus in
                var next: UnsafeMutablePointer<UInt8>? = buffer.baseAddress! + written
                defer { written = next! - buffer.baseAddress! }
                return JxlEncoderProcessOutput(encoder, &next, &available)
            }
            switch status {
            case JXL_ENC_SUCCESS: return Data(output.prefix(written))
            case JXL_ENC_NEED_MORE_OUTPUT: output += [UInt8](repeating: 0, count: output.count)
            default: throw Failure(description: "JxlEncoderProcessOutput failed")
            }
        }
    }

    // MARK: - HEIC

    /// An HEIC of an RGB `image`, through libheif's x265 encoder, with a
    /// thumbnail fitting `thumbnailBox` pixels, EXIF (a TIFF structure), XMP
    /// and an ICC profile if given; `nclxPrimaries` labels the colours with
    /// those H.273 primaries and the sRGB transfer, as an iPhone labels
    /// Display P3 (12); `depth` above 8 stores samples of that many bits.
    public static func heic(
        _ image: Image, directory: URL, thumbnailBox: Int? = nil, exif: Data? = nil, xmp: Data? = nil, iccProfile: Data? = nil,
        nclxPrimaries: UInt16? = nil, depth: Int = 8
    ) throws -> Data {
        guard let context = heif_context_alloc() else { throw Failure(description: "heif_context_alloc failed") }
        defer { heif_context_free(context) }
        func check(_ error: heif_error) throws {
            guard error.code != heif_error_Ok else { return }
            throw Failure(description: error.message.map { String(cString: $0) } ?? "libheif error")
        }
        var encoder: OpaquePointer?
        try check(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder))
        defer { heif_encoder_release(encoder) }
        try check(heif_encoder_set_lossy_quality(encoder, 95))
        var picture: OpaquePointer?
        let chroma = depth > 8 ? heif_chroma_interleaved_RRGGBB_LE : heif_chroma_interleaved_RGB
        try check(heif_image_create(Int32(image.width), Int32(image.height), heif_colorspace_RGB, chroma, &picture))
        defer { heif_image_release(picture) }
        try check(heif_image_add_plane(picture, heif_channel_interleaved, Int32(image.width), Int32(image.height), Int32(depth)))
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane(picture, heif_channel_interleaved, &stride) else { throw Failure(description: "no plane") }
        let largest = (1 << depth) - 1
        for row in 0..<image.height {
            for column in 0..<(image.width * 3) {
                let value = image.pixels[row * image.bytesPerRow + column]
                guard depth > 8 else {
                    plane[row * Int(stride) + column] = value
                    continue
                }
                // Little-endian samples of `depth` bits; a gentle ramp in the
                // low bits across the row, so that they carry something.
                let deep = min(largest, (Int(value) * largest + 127) / 255 + column % 3)
                plane[row * Int(stride) + 2 * column] = UInt8(deep & 0xFF)
                plane[row * Int(stride) + 2 * column + 1] = UInt8(deep >> 8)
            }
        }
        if let iccProfile {
            try iccProfile.withUnsafeBytes { try check(heif_image_set_raw_color_profile(picture, "prof", $0.baseAddress, $0.count)) }
        }
        guard let options = heif_encoding_options_alloc() else { throw Failure(description: "heif_encoding_options_alloc failed") }
        defer { heif_encoding_options_free(options) }
        let nclx = nclxPrimaries == nil ? nil : heif_nclx_color_profile_alloc()
        defer { heif_nclx_color_profile_free(nclx) }
        if let nclxPrimaries, let nclx {
            try check(heif_nclx_color_profile_set_color_primaries(nclx, nclxPrimaries))
            try check(heif_nclx_color_profile_set_transfer_characteristics(nclx, 13))
            try check(heif_nclx_color_profile_set_matrix_coefficients(nclx, 6))
            nclx.pointee.full_range_flag = 1
            try check(heif_image_set_nclx_color_profile(picture, nclx))
            // libheif leaves nclx out by default (macOS once misread it).
            options.pointee.output_nclx_profile = nclx
            options.pointee.macOS_compatibility_workaround_no_nclx_profile = 0
        }
        var handle: OpaquePointer?
        try check(heif_context_encode_image(context, picture, encoder, options, &handle))
        defer { heif_image_handle_release(handle) }
        if let thumbnailBox {
            try check(heif_context_encode_thumbnail(context, picture, handle, encoder, nil, Int32(thumbnailBox), nil))
        }
        if let exif {
            // libheif writes the offset to the TIFF header before it, as HEIF's Exif item has.
            try exif.withUnsafeBytes { try check(heif_context_add_exif_metadata(context, handle, $0.baseAddress, Int32($0.count))) }
        }
        if let xmp {
            try xmp.withUnsafeBytes { try check(heif_context_add_XMP_metadata(context, handle, $0.baseAddress, Int32($0.count))) }
        }
        let file = directory.appendingPathComponent("fixture-\(UUID().uuidString).heic")
        try check(heif_context_write_to_file(context, file.path))
        return try Data(contentsOf: file)
    }
}
