import Foundation

extension FormatFixtures {
    /// A field of a hand-made TIFF directory: a tag, its type and values.
    public struct TIFFField {
        /// The tag.
        public var tag: Int
        /// 1 BYTE, 2 ASCII, 3 SHORT, 4 LONG, 7 UNDEFINED.
        public var type: Int
        /// Numbers for SHORT and LONG, bytes for the others.
        public var values: [Int]

        /// SHORT values.
        public static func short(_ tag: Int, _ values: Int...) -> TIFFField { TIFFField(tag: tag, type: 3, values: values) }
        /// LONG values.
        public static func long(_ tag: Int, _ values: Int...) -> TIFFField { TIFFField(tag: tag, type: 4, values: values) }
        /// An ASCII value, its terminating zero added.
        public static func ascii(_ tag: Int, _ text: String) -> TIFFField {
            TIFFField(tag: tag, type: 2, values: (Array(text.utf8) + [0]).map(Int.init))
        }
        /// An UNDEFINED value: bytes.
        public static func undefined(_ tag: Int, _ bytes: Data) -> TIFFField { TIFFField(tag: tag, type: 7, values: bytes.map(Int.init)) }

        var valueSize: Int { type == 3 ? 2 : type == 4 ? 4 : 1 }
    }

    /// A TIFF built byte by byte, for what libtiff will not write (a
    /// declared size its data cannot hold, damaged offsets) and for exact
    /// control of the directories: one uncompressed strip of 8-bit RGB
    /// `pixels` right after the header, then the first directory (the
    /// image's tags and `fields`; a field replaces the image's tag of the
    /// same number), then an EXIF directory of `exifFields` if any.
    public static func handMadeTIFF(
        width: Int, height: Int, pixels: [UInt8], fields: [TIFFField] = [], exifFields: [TIFFField] = [], bigEndian: Bool = false
    ) -> Data {
        func encode(_ value: Int, _ size: Int) -> [UInt8] {
            (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * (bigEndian ? size - 1 - $0 : $0))) }
        }
        func directoryLength(_ fields: [TIFFField]) -> Int {
            2 + 12 * fields.count + 4
                + fields.reduce(0) { total, field in
                    let length = field.values.count * field.valueSize
                    return total + (length > 4 ? length + length % 2 : 0)
                }
        }
        func directory(_ fields: [TIFFField], at start: Int) -> [UInt8] {
            var output = encode(fields.count, 2)
            var values: [UInt8] = []
            let valuesStart = start + 2 + 12 * fields.count + 4
            for field in fields.sorted(by: { $0.tag < $1.tag }) {
                let bytes = field.values.flatMap { encode($0, field.valueSize) }
                output += encode(field.tag, 2) + encode(field.type, 2) + encode(field.values.count, 4)
                if bytes.count <= 4 {
                    output += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
                } else {
                    output += encode(valuesStart + values.count, 4)
                    values += bytes + (bytes.count % 2 == 1 ? [0] : [])
                }
            }
            return output + encode(0, 4) + values
        }
        let pixelBytes = pixels + (pixels.count % 2 == 1 ? [0] : [])
        let firstStart = 8 + pixelBytes.count
        var first: [TIFFField] = [
            .long(256, width), .long(257, height), .short(258, 8, 8, 8), .short(259, 1), .short(262, 2), .long(273, 8), .short(277, 3),
            .long(278, height), .long(279, pixels.count),
        ]
        first.removeAll { field in fields.contains { $0.tag == field.tag } }
        first += fields
        if !exifFields.isEmpty { first.append(.long(0x8769, 0)) }
        let exifStart = firstStart + directoryLength(first)
        if !exifFields.isEmpty { first[first.count - 1] = .long(0x8769, exifStart) }
        var output = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + encode(42, 2) + encode(firstStart, 4) + pixelBytes
        output += directory(first, at: firstStart)
        if !exifFields.isEmpty { output += directory(exifFields, at: exifStart) }
        return Data(output)
    }
}
