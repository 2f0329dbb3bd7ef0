import CAvif
import CHeif
import CSpng
import Foundation

extension ImageMetadata {
    /// The metadata `data` carries, read without decoding the pixels:
    /// JPEG (APP1 EXIF and XMP, APP2 ICC, APP13 IPTC), PNG (eXIf, iTXt XMP
    /// and iCCP before the image data), WebP (EXIF, XMP, ICCP chunks), AVIF
    /// and HEIC (Exif and XMP items, the colr profile), TIFF (the first
    /// page's ICC profile, XMP and Photoshop tags, and an EXIF block made
    /// of its descriptive tags and EXIF and GPS directories), BMP (a V5
    /// header's embedded profile). Nothing for other formats, for damaged
    /// blocks, or for blocks over ``maximumBlockSize``.
    public init(reading data: Data) {
        self.init()
        switch ImageFormat(sniffing: data) {
        case .jpeg: data.withUnsafeBytes { readJPEG($0) }
        case .webp: data.withUnsafeBytes { readWebP($0) }
        case .png: readPNG(data)
        case .avif: readAVIF(data)
        case .heic: readHEIC(data)
        case .tiff: data.withUnsafeBytes { readTIFF($0) }
        case .bmp: data.withUnsafeBytes { readBMP($0) }
        default: break
        }
        for keyPath in [\ImageMetadata.exif, \.xmp, \.iptc, \.iccProfile] where (self[keyPath: keyPath]?.count ?? 0) > Self.maximumBlockSize {
            self[keyPath: keyPath] = nil
        }
    }

    private mutating func readJPEG(_ bytes: UnsafeRawBufferPointer) {
        iccProfile = JPEGSegments.iccProfile(in: bytes)
        JPEGSegments.forEach(in: bytes) { marker, payload in
            switch marker {
            case 0xE1:
                if exif == nil, let tiff = payload.dropping(prefix: "Exif\0\0"), EXIF(tiff) != nil {
                    exif = Data(tiff)
                } else if xmp == nil, let packet = payload.dropping(prefix: "http://ns.adobe.com/xap/1.0/\0") {
                    xmp = Data(packet)
                }
            case 0xED:
                if iptc == nil, let resources = payload.dropping(prefix: PhotoshopResources.signature) { iptc = Data(resources) }
            default: break
            }
            return true
        }
    }

    private mutating func readWebP(_ bytes: UnsafeRawBufferPointer) {
        RIFFChunks.forEach(in: bytes) { code, payload in
            if code.isText("EXIF") {
                exif = EXIF.tiffStructure(in: payload)
            } else if code.isText("XMP ") {
                xmp = Data(payload)
            } else if code.isText("ICCP") {
                iccProfile = Data(payload)
            }
            return true
        }
    }

    private mutating func readTIFF(_ bytes: UnsafeRawBufferPointer) {
        guard let file = EXIF(bytes) else { return }
        let entries = file.entries
        func block(_ tag: Int) -> Data? {
            guard let entry = entries.first(where: { $0.tag == tag }), let value = file.value(entry),
                value.count <= Self.maximumBlockSize
            else { return nil }
            return Data(value)
        }
        iccProfile = block(0x8773)
        xmp = block(0x02BC)
        // Photoshop's image resources, as a JPEG's APP13 segment holds them.
        iptc = block(0x8649)
        exif = file.blockFromTIFFFile()
    }

    private mutating func readBMP(_ bytes: UnsafeRawBufferPointer) {
        guard let (bitmap, _) = try? BMPDecoder.bitmap(in: bytes), let profile = bitmap.profile, profile.count <= Self.maximumBlockSize else {
            return
        }
        iccProfile = Data(bytes[profile])
    }

    private mutating func readPNG(_ data: Data) {
        guard let context = spng_ctx_new(0) else { return }
        defer { spng_ctx_free(context) }
        data.withUnsafeBytes { bytes in
            // Compressed chunks are inflated by libspng: bound what it keeps.
            guard spng_set_png_buffer(context, bytes.baseAddress, bytes.count) == 0,
                spng_set_chunk_limits(context, Self.maximumBlockSize, 4 * Self.maximumBlockSize) == 0
            else { return }
            var exifChunk = spng_exif()
            if spng_get_exif(context, &exifChunk) == 0, let bytes = exifChunk.data {
                exif = EXIF.tiffStructure(in: UnsafeRawBufferPointer(start: bytes, count: exifChunk.length))
            }
            var profile = spng_iccp()
            if spng_get_iccp(context, &profile) == 0, let bytes = profile.profile {
                iccProfile = Data(bytes: bytes, count: profile.profile_len)
            }
            var count: UInt32 = 0
            guard spng_get_text(context, nil, &count) == 0, count > 0 else { return }
            var texts = [spng_text](repeating: spng_text(), count: Int(count))
            guard spng_get_text(context, &texts, &count) == 0 else { return }
            for text in texts.prefix(Int(count)) where text.type == Int32(SPNG_ITXT.rawValue) {
                let keyword = withUnsafeBytes(of: text.keyword) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if keyword == "XML:com.adobe.xmp", let bytes = text.text {
                    xmp = Data(bytes: bytes, count: text.length)
                }
            }
        }
    }

    private mutating func readAVIF(_ data: Data) {
        guard let source = try? AVIFFrameSource(data, options: ImageDecodingOptions()) else { return }
        let image = source.decoder.pointee.image.pointee
        func block(_ data: avifRWData) -> UnsafeRawBufferPointer? {
            guard let bytes = data.data, data.size > 0 else { return nil }
            return UnsafeRawBufferPointer(start: bytes, count: data.size)
        }
        exif = block(image.exif).flatMap(EXIF.tiffStructure)
        xmp = block(image.xmp).map { Data($0) }
        iccProfile = block(image.icc).map { Data($0) }
    }

    private mutating func readHEIC(_ data: Data) {
        let read = try? HEIFDecoder.withPrimaryImage(of: data) { _, handle throws(ImageDecodingError) -> ImageMetadata in
            var metadata = ImageMetadata(iccProfile: HEIFDecoder.iccProfile(of: handle))
            let count = Int(heif_image_handle_get_number_of_metadata_blocks(handle, nil))
            var ids = [heif_item_id](repeating: 0, count: count)
            let listed = Int(heif_image_handle_get_list_of_metadata_block_IDs(handle, nil, &ids, Int32(count)))
            for id in ids.prefix(listed) {
                let size = heif_image_handle_get_metadata_size(handle, id)
                guard size > 0, size <= Self.maximumBlockSize else { continue }
                var block = Data(count: size)
                guard block.withUnsafeMutableBytes({ heif_image_handle_get_metadata(handle, id, $0.baseAddress) }).code == heif_error_Ok else {
                    continue
                }
                let type = heif_image_handle_get_metadata_type(handle, id).map { String(cString: $0) }
                let contentType = heif_image_handle_get_metadata_content_type(handle, id).map { String(cString: $0) }
                if type == "Exif", metadata.exif == nil {
                    metadata.exif = block.withUnsafeBytes(EXIF.tiffStructure)
                } else if type == "mime", contentType == "application/rdf+xml", metadata.xmp == nil {
                    metadata.xmp = block
                }
            }
            return metadata
        }
        if let read { self = read }
    }
}
