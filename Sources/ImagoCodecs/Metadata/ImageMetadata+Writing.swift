import CWebP
import Foundation

extension ImageMetadata {
    /// `jpeg` with the metadata's segments after its SOI and JFIF segments:
    /// EXIF and XMP in APP1, the ICC profile split over APP2 segments, IPTC
    /// in APP13. A block too large for a segment (EXIF, XMP or IPTC over
    /// 64 KiB) is left out: JPEG has no room for it.
    func inserted(intoJPEG jpeg: Data) -> Data {
        guard !isEmpty, let insertion = jpeg.withUnsafeBytes(JPEGSegments.insertionPoint) else { return jpeg }
        var segments: [UInt8] = []
        if let exif, let segment = JPEGSegments.segment(0xE1, Array("Exif\0\0".utf8) + exif) { segments += segment }
        if let xmp, let segment = JPEGSegments.segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0".utf8) + xmp) { segments += segment }
        if let iccProfile { segments += Self.iccSegments(iccProfile) }
        if let iptc, let segment = JPEGSegments.segment(0xED, Array(PhotoshopResources.signature.utf8) + iptc) { segments += segment }
        var output = jpeg
        output.insert(contentsOf: segments, at: jpeg.startIndex + insertion)
        return output
    }

    /// APP2 segments numbered 1...count, each with "ICC_PROFILE\0", its
    /// number and the count; none for a profile of more than 255 segments.
    private static func iccSegments(_ profile: Data) -> [UInt8] {
        let header = Array("ICC_PROFILE\0".utf8)
        let chunkSize = 0xFFFF - 2 - header.count - 2
        let count = (profile.count + chunkSize - 1) / chunkSize
        guard count > 0, count <= 255 else { return [] }
        var segments: [UInt8] = []
        for index in 0..<count {
            let start = profile.startIndex + index * chunkSize
            let chunk = profile[start..<min(start + chunkSize, profile.endIndex)]
            segments += JPEGSegments.segment(0xE2, header + [UInt8(index + 1), UInt8(count)] + chunk) ?? []
        }
        return segments
    }

    /// `webp` with the metadata's ICCP, EXIF and XMP chunks, made an
    /// extended (VP8X) file by libwebpmux; IPTC has no place in WebP.
    func inserted(intoWebP webp: Data) throws(ImageEncodingError) -> Data {
        let blocks = [("ICCP", iccProfile), ("EXIF", exif), ("XMP ", xmp)].compactMap { name, block in block.map { (name, $0) } }
        guard !blocks.isEmpty else { return webp }
        let assembled = webp.withUnsafeBytes { bytes -> Data? in
            var bitstream = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            guard let mux = WebPMuxCreate(&bitstream, 0) else { return nil }
            defer { WebPMuxDelete(mux) }
            for (name, block) in blocks {
                let status = block.withUnsafeBytes { blockBytes in
                    var chunk = WebPData(bytes: blockBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: blockBytes.count)
                    return WebPMuxSetChunk(mux, name, &chunk, 1)
                }
                guard status == WEBP_MUX_OK else { return nil }
            }
            var output = WebPData()
            guard WebPMuxAssemble(mux, &output) == WEBP_MUX_OK, let bytes = output.bytes else { return nil }
            defer { WebPDataClear(&output) }
            return Data(bytes: bytes, count: output.size)
        }
        guard let assembled else { throw ImageEncodingError(format: .webp, detail: "libwebpmux could not add the metadata") }
        return assembled
    }
}
