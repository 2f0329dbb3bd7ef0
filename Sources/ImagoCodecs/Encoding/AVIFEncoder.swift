import CAvif
import Foundation

/// Encodes AVIF with libavif (its AV1 encoder is libaom in Debian's
/// build), lossy, 4:2:0, keeping alpha, at a fast speed suited to serving
/// thumbnails. Gray images are written as RGB.
public struct AVIFEncoder: ImageEncoding {
    /// Quality from 1 to 100, mapped onto AV1's quantizer (100: the finest).
    public var quality: Int
    /// libavif's speed, 0 (slowest, smallest) to 10 (fastest). Default: 8.
    public var speed: Int
    /// What is written besides the pixels (EXIF, XMP, ICC; AVIF has no
    /// place for IPTC). Default: nothing.
    public var metadata: ImageMetadata

    /// Creates an encoder; `quality` is clamped to 1...100, `speed` to 0...10.
    public init(quality: Int = 60, speed: Int = 8, metadata: ImageMetadata = ImageMetadata()) {
        self.quality = min(100, max(1, quality))
        self.speed = min(10, max(0, speed))
        self.metadata = metadata
    }

    public var format: ImageFormat { .avif }

    public func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        let encoder = try makeEncoder()
        defer { avifEncoderDestroy(encoder) }
        let avifImage = try makeAVIFImage(image, withMetadata: true)
        defer { avifImageDestroy(avifImage) }
        try check(avifEncoderAddImage(encoder, avifImage, 1, avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue)))
        return try finish(encoder)
    }

    /// A libavif encoder with this encoder's speed and quality, one thread.
    func makeEncoder() throws(ImageEncodingError) -> UnsafeMutablePointer<avifEncoder> {
        guard let encoder = avifEncoderCreate() else { throw ImageEncodingError(format: .avif, detail: "libavif could not start") }
        // AV1 quantizers run from 0 (finest) to 63.
        let quantizer = Int32((Double(100 - quality) * 63 / 99).rounded())
        encoder.pointee.speed = Int32(speed)
        encoder.pointee.maxThreads = 1
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = quantizer
        encoder.pointee.maxQuantizerAlpha = quantizer
        return encoder
    }

    /// `image` as a libavif image (4:2:0, alpha kept), with the metadata if
    /// asked for; the caller destroys it.
    func makeAVIFImage(_ image: Image, withMetadata: Bool) throws(ImageEncodingError) -> UnsafeMutablePointer<avifImage> {
        guard let avifImage = avifImageCreate(UInt32(image.width), UInt32(image.height), 8, AVIF_PIXEL_FORMAT_YUV420) else {
            throw ImageEncodingError(format: .avif, detail: "libavif refused \(image.width)x\(image.height)")
        }
        if withMetadata { setMetadata(of: avifImage) }
        var color = image.colorPixels()
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, avifImage)
        rgb.format = image.pixelFormat.hasAlpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        rgb.depth = 8
        rgb.rowBytes = UInt32(color.bytesPerRow)
        let converted = color.pixels.withUnsafeMutableBufferPointer { buffer in
            rgb.pixels = buffer.baseAddress
            return avifImageRGBToYUV(avifImage, &rgb)
        }
        do throws(ImageEncodingError) {
            try check(converted)
        } catch {
            avifImageDestroy(avifImage)
            throw error
        }
        return avifImage
    }

    /// The file the encoder's images make.
    func finish(_ encoder: UnsafeMutablePointer<avifEncoder>) throws(ImageEncodingError) -> Data {
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        try check(avifEncoderFinish(encoder, &output))
        guard let bytes = output.data else { throw ImageEncodingError(format: .avif, detail: "no output") }
        return Data(bytes: bytes, count: output.size)
    }

    private func setMetadata(of image: UnsafeMutablePointer<avifImage>) {
        metadata.iccProfile?.withUnsafeBytes { avifImageSetProfileICC(image, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
        // libavif turns the EXIF orientation into irot and imir boxes, which viewers apply.
        metadata.exif?.withUnsafeBytes { avifImageSetMetadataExif(image, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
        metadata.xmp?.withUnsafeBytes { avifImageSetMetadataXMP(image, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
    }

    func check(_ result: avifResult) throws(ImageEncodingError) {
        guard result != AVIF_RESULT_OK else { return }
        throw ImageEncodingError(format: .avif, detail: String(cString: avifResultToString(result)))
    }
}
