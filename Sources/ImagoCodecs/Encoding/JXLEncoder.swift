import CJxl
import Foundation

/// Encodes JPEG XL with libjxl (0.7 on Debian 12), lossy or lossless, one
/// thread, in the image's own pixel format (gray, gray + alpha, RGB, RGBA;
/// 8 bits per sample).
///
/// ```swift
/// let lossy = try JXLEncoder(quality: 80).encode(image)
/// let exact = try JXLEncoder(lossless: true).encode(image)
/// ```
///
/// Quality runs from 1 to 100 and is turned into libjxl's butteraugli
/// distance as `cjxl -q` turns it (libjxl 0.7's `tools/cjxl_main.cc`):
/// 100 is lossless, 90 is distance 1 ("visually lossless"), each step below
/// adds 0.09 down to 30 (distance 6.4), and below 30 the distance grows
/// faster, up to libjxl's largest, 25.
public struct JXLEncoder: ImageEncoding {
    /// Quality from 1 to 100; 100 is lossless.
    public var quality: Int
    /// Whether every pixel is kept exactly, whatever the quality.
    public var isLossless: Bool
    /// libjxl's effort, 1 (fastest) to 9 (slowest, smallest). Default: 3,
    /// libjxl's "falcon", fast enough to encode while a request waits;
    /// libjxl's own default is 7.
    public var effort: Int
    /// What is written besides the pixels: the ICC profile as the image's
    /// colour encoding, EXIF and XMP in `Exif` and `xml ` boxes (JPEG XL has
    /// no place for IPTC). The EXIF orientation is not applied: libjxl stores
    /// the pixels as given. Default: nothing (sRGB).
    public var metadata: ImageMetadata

    /// Creates an encoder; `quality` is clamped to 1...100, `effort` to 1...9.
    public init(quality: Int = 80, lossless: Bool = false, effort: Int = 3, metadata: ImageMetadata = ImageMetadata()) {
        self.quality = min(100, max(1, quality))
        self.isLossless = lossless
        self.effort = min(9, max(1, effort))
        self.metadata = metadata
    }

    public var format: ImageFormat { .jxl }

    /// The butteraugli distance `quality` asks for, as `cjxl -q` maps it;
    /// 0 for 100 (lossless).
    public static func distance(forQuality quality: Int) -> Float {
        let quality = Double(min(100, max(1, quality)))
        if quality >= 100 { return 0 }
        if quality >= 30 { return Float(0.1 + (100 - quality) * 0.09) }
        return Float(min(25, 6.4 + pow(2.5, (30 - quality) / 5) / 6.25))
    }

    public func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        guard let encoder = JxlEncoderCreate(nil) else { throw ImageEncodingError(format: .jxl, detail: "libjxl could not start") }
        defer { JxlEncoderDestroy(encoder) }
        let lossless = isLossless || quality >= 100
        let gray = image.pixelFormat == .gray8 || image.pixelFormat == .grayAlpha8
        let alpha = image.pixelFormat.hasAlpha

        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(image.width)
        info.ysize = UInt32(image.height)
        info.bits_per_sample = 8
        info.num_color_channels = gray ? 1 : 3
        info.alpha_bits = alpha ? 8 : 0
        info.num_extra_channels = alpha ? 1 : 0
        // Lossless keeps the samples as given; lossy converts to XYB.
        info.uses_original_profile = lossless ? 1 : 0
        try check(encoder, JxlEncoderSetBasicInfo(encoder, &info), "setting the basic info")
        try setColorEncoding(encoder, gray: gray)
        try addBoxes(encoder)

        guard let settings = JxlEncoderFrameSettingsCreate(encoder, nil) else {
            throw ImageEncodingError(format: .jxl, detail: "libjxl could not make frame settings")
        }
        try check(encoder, JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(effort)), "setting the effort")
        if lossless {
            try check(encoder, JxlEncoderSetFrameLossless(settings, 1), "setting lossless")
        } else {
            try check(encoder, JxlEncoderSetFrameDistance(settings, Self.distance(forQuality: quality)), "setting the distance")
        }

        var pixelFormat = JxlPixelFormat(
            num_channels: UInt32(image.pixelFormat.bytesPerPixel), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        let rowBytes = image.width * image.pixelFormat.bytesPerPixel
        // libjxl takes rows packed (or aligned to a power of two): repack padded rows.
        let packed =
            image.bytesPerRow == rowBytes
            ? image.pixels
            : (0..<image.height).flatMap { y in image.pixels[(y * image.bytesPerRow)..<(y * image.bytesPerRow + rowBytes)] }
        let added = packed.withUnsafeBufferPointer { pixels in
            JxlEncoderAddImageFrame(settings, &pixelFormat, pixels.baseAddress, pixels.count)
        }
        try check(encoder, added, "adding the pixels")
        JxlEncoderCloseInput(encoder)
        return try output(encoder)
    }

    /// The ICC profile if there is one, else sRGB (gray: sRGB's transfer curve).
    private func setColorEncoding(_ encoder: OpaquePointer, gray: Bool) throws(ImageEncodingError) {
        if let profile = metadata.iccProfile {
            let status = profile.withUnsafeBytes { bytes in
                JxlEncoderSetICCProfile(encoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
            }
            try check(encoder, status, "setting the ICC profile")
        } else {
            var color = JxlColorEncoding()
            JxlColorEncodingSetToSRGB(&color, gray ? 1 : 0)
            try check(encoder, JxlEncoderSetColorEncoding(encoder, &color), "setting the colour encoding")
        }
    }

    /// EXIF and XMP boxes, which need the container format.
    private func addBoxes(_ encoder: OpaquePointer) throws(ImageEncodingError) {
        // An Exif box starts with the offset of the TIFF header: 0, it follows.
        let boxes = [("Exif", metadata.exif.map { Data(count: 4) + $0 }), ("xml ", metadata.xmp)].compactMap { type, contents in
            contents.map { (type, $0) }
        }
        guard !boxes.isEmpty else { return }
        try check(encoder, JxlEncoderUseContainer(encoder, 1), "choosing the container format")
        try check(encoder, JxlEncoderUseBoxes(encoder), "enabling metadata boxes")
        for (type, contents) in boxes {
            let status = contents.withUnsafeBytes { bytes in
                JxlEncoderAddBox(encoder, type, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, 0)
            }
            try check(encoder, status, "adding the \(type) box")
        }
    }

    /// Runs the encoder to the end, growing the output as it asks for more.
    private func output(_ encoder: OpaquePointer) throws(ImageEncodingError) -> Data {
        var output = [UInt8](repeating: 0, count: 64 * 1024)
        var written = 0
        while true {
            var available = output.count - written
            let status = output.withUnsafeMutableBufferPointer { buffer in
                var next = buffer.baseAddress.map { $0 + written }
                let status = JxlEncoderProcessOutput(encoder, &next, &available)
                return status
            }
            written = output.count - available
            switch status {
            case JXL_ENC_SUCCESS:
                return Data(output[0..<written])
            case JXL_ENC_NEED_MORE_OUTPUT:
                output += repeatElement(0, count: output.count)
            default:
                try check(encoder, status, "encoding")
                throw ImageEncodingError(format: .jxl, detail: "libjxl returned status \(status.rawValue) while encoding")
            }
        }
    }

    private func check(_ encoder: OpaquePointer, _ status: JxlEncoderStatus, _ step: String) throws(ImageEncodingError) {
        guard status != JXL_ENC_SUCCESS else { return }
        let reason =
            switch JxlEncoderGetError(encoder) {
            case JXL_ENC_ERR_OOM: "out of memory"
            case JXL_ENC_ERR_BAD_INPUT: "bad input"
            case JXL_ENC_ERR_NOT_SUPPORTED: "not supported"
            case JXL_ENC_ERR_API_USAGE: "invalid use of the API"
            case JXL_ENC_ERR_JBRD: "JPEG reconstruction data"
            default: "generic error"
            }
        throw ImageEncodingError(format: .jxl, detail: "libjxl failed \(step): \(reason)")
    }
}
