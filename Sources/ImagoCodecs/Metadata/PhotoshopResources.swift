import Foundation

/// Photoshop image resources (a JPEG's APP13 segment after its
/// "Photoshop 3.0\0" signature), where IPTC-IIM metadata is kept: resource
/// 0x0404. Every size is bounds-checked: the bytes come from the network.
enum PhotoshopResources {
    static let signature = "Photoshop 3.0\0"
    static let iptcResource = 0x0404

    /// The IPTC datasets a copyright notice keeps: By-line (2:80), Credit
    /// (2:110) and Copyright Notice (2:116); datasets of other records
    /// (such as the character set, 1:90) stay too.
    static let copyrightDatasets: Set<Int> = [80, 110, 116]

    /// Resources holding only `resources`' IPTC copyright datasets; nil if it has none.
    static func copyrightOnly(_ resources: Data) -> Data? {
        let kept = resources.withUnsafeBytes { bytes -> [UInt8]? in
            guard let iptc = iptcBlock(in: bytes) else { return nil }
            return keptDatasets(of: iptc)
        }
        guard let kept else { return nil }
        let padding: [UInt8] = kept.count % 2 == 1 ? [0] : []
        let size = (0..<4).map { UInt8(kept.count >> (8 * (3 - $0)) & 0xFF) }
        // "8BIM", the resource id, an empty name padded to two bytes, the size, the data padded to an even length.
        return Data(Array("8BIM".utf8) + [0x04, 0x04, 0, 0] + size + kept + padding)
    }

    /// Resource 0x0404's data.
    private static func iptcBlock(in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        func bigEndian(_ offset: Int, _ size: Int) -> Int? {
            guard offset >= 0, offset <= bytes.count - size else { return nil }
            return (0..<size).reduce(0) { $0 << 8 | Int(bytes[offset + $1]) }
        }
        var offset = 0
        while offset + 4 <= bytes.count, UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 4)]).isText("8BIM") {
            guard let id = bigEndian(offset + 4, 2), let nameLength = bigEndian(offset + 6, 1) else { return nil }
            // The name is a Pascal string padded to an even length, its length byte included.
            let sizeOffset = offset + 6 + (nameLength + 2) & ~1
            guard let size = bigEndian(sizeOffset, 4), size <= bytes.count - sizeOffset - 4 else { return nil }
            let data = UnsafeRawBufferPointer(rebasing: bytes[(sizeOffset + 4)..<(sizeOffset + 4 + size)])
            if id == iptcResource { return data }
            offset = sizeOffset + 4 + size + (size & 1)
        }
        return nil
    }

    /// The datasets of an IPTC-IIM block to keep, in order; nil if no
    /// copyright dataset is among them.
    private static func keptDatasets(of iptc: UnsafeRawBufferPointer) -> [UInt8]? {
        var kept: [UInt8] = []
        var hasCopyright = false
        var offset = 0
        // A dataset: the tag marker 0x1C, record, dataset, a two-byte length, the value.
        while offset + 5 <= iptc.count, iptc[offset] == 0x1C {
            let record = Int(iptc[offset + 1])
            let dataset = Int(iptc[offset + 2])
            var length = Int(iptc[offset + 3]) << 8 | Int(iptc[offset + 4])
            var header = 5
            if length & 0x8000 != 0 {
                // An extended dataset: the low bits count the length's own bytes.
                let lengthBytes = length & 0x7FFF
                guard lengthBytes <= 4, offset + 5 + lengthBytes <= iptc.count else { break }
                length = (0..<lengthBytes).reduce(0) { $0 << 8 | Int(iptc[offset + 5 + $1]) }
                header += lengthBytes
            }
            guard length <= iptc.count - offset - header else { break }
            let end = offset + header + length
            if record != 2 || copyrightDatasets.contains(dataset) {
                kept += iptc[offset..<end]
                hasCopyright = hasCopyright || record == 2
            }
            offset = end
        }
        return hasCopyright ? kept : nil
    }
}
