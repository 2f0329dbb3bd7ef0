import CLcms2
import Foundation

/// Metadata blocks built byte by byte, as cameras and editors write them.
public enum MetadataFixtures {
    /// An ASCII value with its terminating zero.
    public static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }

    /// A TIFF structure (an EXIF block) whose first directory holds
    /// `orientation` (a SHORT) and the ASCII `fields` by tag, in tag order,
    /// the values after it.
    public static func exif(orientation: Int? = nil, fields: [Int: String] = [:], bigEndian: Bool = true) -> Data {
        func bytes(_ value: Int, _ size: Int) -> [UInt8] {
            (0..<size).map { UInt8(value >> (8 * (bigEndian ? size - 1 - $0 : $0)) & 0xFF) }
        }
        var entries: [(tag: Int, type: Int, value: [UInt8])] = fields.map { ($0.key, 2, ascii($0.value)) }
        if let orientation { entries.append((0x0112, 3, bytes(orientation, 2) + [0, 0])) }
        entries.sort { $0.tag < $1.tag }
        var output: [UInt8] = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + bytes(42, 2) + bytes(8, 4) + bytes(entries.count, 2)
        let valuesStart = 8 + 2 + entries.count * 12 + 4
        var values: [UInt8] = []
        for entry in entries {
            let count = entry.type == 2 ? entry.value.count : 1
            output += bytes(entry.tag, 2) + bytes(entry.type, 2) + bytes(count, 4)
            if entry.value.count <= 4 {
                output += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
            } else {
                output += bytes(valuesStart + values.count, 4)
                values += entry.value
                if values.count % 2 == 1 { values.append(0) }  // values start on a word boundary
            }
        }
        return Data(output + bytes(0, 4) + values)
    }

    /// Photoshop image resources: a resolution resource (0x03ED) with a
    /// name, then IPTC-IIM (0x0404) holding `datasets` (record, dataset, value) in order.
    public static func photoshopResources(iptc datasets: [(record: UInt8, dataset: UInt8, value: String)]) -> Data {
        func resource(_ id: UInt16, name: [UInt8], _ data: [UInt8]) -> [UInt8] {
            var pascal = [UInt8(name.count)] + name
            if pascal.count % 2 == 1 { pascal.append(0) }
            let size = (0..<4).map { UInt8(data.count >> (8 * (3 - $0)) & 0xFF) }
            return Array("8BIM".utf8) + [UInt8(id >> 8), UInt8(id & 0xFF)] + pascal + size + data + (data.count % 2 == 1 ? [0] : [])
        }
        let iptc = datasets.flatMap { record, dataset, value -> [UInt8] in
            let bytes = Array(value.utf8)
            return [0x1C, record, dataset, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        }
        return Data(resource(0x03ED, name: Array("res".utf8), [0, 72, 0, 0, 0, 1, 0, 1, 0, 72, 0, 0, 0, 1, 0, 1]) + resource(0x0404, name: [], iptc))
    }

    /// An XMP packet naming `creator`.
    public static func xmp(creator: String) -> Data {
        Data(
            """
            <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF \
            xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/">\
            <dc:creator><rdf:Seq><rdf:li>\(creator)</rdf:li></rdf:Seq></dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>\
            <?xpacket end="w"?>
            """.utf8)
    }

    /// Bytes standing for an RGB ICC profile: a header-like start (its
    /// colour space `RGB `, its signature) and `size` bytes in all. The
    /// encoders carry profiles without reading them; decoders find it
    /// unusable, and leave the pixels as stored.
    public static func iccProfile(size: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: size)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
        for (offset, text) in [(16, "RGB "), (36, "acspAPPL")] {
            for (index, byte) in text.utf8.enumerated() where offset + index < size { bytes[offset + index] = byte }
        }
        return Data(bytes)
    }

    /// A real Display P3 ICC profile, as Apple defines it (P3 primaries,
    /// D65, the sRGB curve), built and saved by Little CMS.
    public static func displayP3Profile() -> Data {
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        var primaries = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: 0.680, y: 0.320, Y: 1), Green: cmsCIExyY(x: 0.265, y: 0.690, Y: 1), Blue: cmsCIExyY(x: 0.150, y: 0.060, Y: 1)
        )
        let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        guard let curve = cmsBuildParametricToneCurve(nil, 4, parameters) else { return Data() }
        defer { cmsFreeToneCurve(curve) }
        let curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&white, &primaries, curves) else { return Data() }
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return Data() }
        var data = Data(count: Int(size))
        let saved = data.withUnsafeMutableBytes { cmsSaveProfileToMem(profile, $0.baseAddress, &size) }
        return saved != 0 ? data : Data()
    }
}
