import Foundation

/// An EXIF block: a TIFF structure, from its byte-order mark. Only the
/// first directory (IFD0) is read, where orientation, artist and copyright
/// are. Every offset is bounds-checked: the bytes come from the network.
struct EXIF {
    let bytes: UnsafeRawBufferPointer
    let isBigEndian: Bool

    /// One 12-byte directory entry.
    struct Entry {
        var tag: Int
        var type: Int
        var count: Int
        /// Where the entry starts in the block.
        var position: Int
    }

    static let orientationTag = 0x0112
    static let artistTag = 0x013B
    static let copyrightTag = 0x8298

    /// Reads `bytes` if they start with a TIFF header.
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x4D, 0x4D): isBigEndian = true
        case (0x49, 0x49): isBigEndian = false
        default: return nil
        }
        self.bytes = bytes
        guard read(2, 2) == 42 else { return nil }
    }

    /// The unsigned integer of `size` bytes at `offset`, nil past the end.
    func read(_ offset: Int, _ size: Int) -> Int? {
        bytes.integer(at: offset, size: size, bigEndian: isBigEndian)
    }

    /// IFD0's entries, in the order stored; stops at the first that runs past the end.
    var entries: [Entry] { read(4, 4).map { entries(at: $0) } ?? [] }

    /// The entries of the directory at `directory`, in the order stored;
    /// stops at the first that runs past the end.
    func entries(at directory: Int) -> [Entry] {
        guard let count = read(directory, 2) else { return [] }
        var entries: [Entry] = []
        for index in 0..<count {
            let position = directory + 2 + index * 12
            guard let tag = read(position, 2), let type = read(position + 2, 2), let count = read(position + 4, 4) else { break }
            entries.append(Entry(tag: tag, type: type, count: count, position: position))
        }
        return entries
    }

    /// The orientation tag's value (a SHORT), if IFD0 has one.
    var orientation: Int? {
        guard let entry = entries.first(where: { $0.tag == Self.orientationTag && $0.type == 3 }) else { return nil }
        return read(entry.position + 8, 2)
    }

    /// An ASCII entry's bytes (its terminating zero included, as stored);
    /// nil for another type or one that runs past the end.
    func ascii(_ entry: Entry) -> UnsafeRawBufferPointer? {
        guard entry.type == 2, entry.count > 0 else { return nil }
        return value(entry)
    }

    /// The bytes of each type's values: BYTE, ASCII, SHORT, LONG, RATIONAL,
    /// SBYTE, UNDEFINED, SSHORT, SLONG, SRATIONAL, FLOAT, DOUBLE, IFD.
    static let typeSizes = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4]

    /// An entry's value bytes, as stored (in the block's byte order): in
    /// the entry when they fit in four bytes, else where it points; nil
    /// for an unknown type or a value that runs past the end.
    func value(_ entry: Entry) -> UnsafeRawBufferPointer? {
        guard let size = Self.typeSizes[entry.type] else { return nil }
        let (length, overflow) = entry.count.multipliedReportingOverflow(by: size)
        guard !overflow, let start = length <= 4 ? entry.position + 8 : read(entry.position + 8, 4) else { return nil }
        return bytes.slice(at: start, length: length)
    }

    /// A SHORT or LONG entry's first value (what sizes and offsets are).
    func integer(_ entry: Entry) -> Int? {
        switch entry.type {
        case 3 where (1...2).contains(entry.count): read(entry.position + 8, 2)
        case 4 where entry.count == 1, 13 where entry.count == 1: read(entry.position + 8, 4)
        default: nil
        }
    }
}

extension EXIF {
    /// `block` with its orientation tag set to `value`; `block` itself if it has none.
    static func settingOrientation(_ value: Int, in block: Data) -> Data {
        let position = block.withUnsafeBytes { bytes -> (Int, Bool)? in
            guard let exif = EXIF(bytes), let entry = exif.entries.first(where: { $0.tag == orientationTag && $0.type == 3 }),
                exif.read(entry.position + 8, 2) != nil
            else { return nil }
            return (entry.position + 8, exif.isBigEndian)
        }
        guard let (offset, isBigEndian) = position else { return block }
        var patched = block
        let start = patched.startIndex + offset
        patched[start] = UInt8(isBigEndian ? value >> 8 : value & 0xFF)
        patched[start + 1] = UInt8(isBigEndian ? value & 0xFF : value >> 8)
        return patched
    }

    /// A new little-endian block holding only `block`'s Artist and
    /// Copyright; nil if it has neither.
    static func copyrightOnly(_ block: Data) -> Data? {
        let fields = block.withUnsafeBytes { bytes -> [(tag: Int, value: [UInt8])] in
            guard let exif = EXIF(bytes) else { return [] }
            return [artistTag, copyrightTag].compactMap { tag in
                guard let entry = exif.entries.first(where: { $0.tag == tag }), let value = exif.ascii(entry) else { return nil }
                return (tag, Array(value))
            }
        }
        guard !fields.isEmpty else { return nil }
        func littleEndian(_ value: Int, _ size: Int) -> [UInt8] { (0..<size).map { UInt8(value >> (8 * $0) & 0xFF) } }
        // Header, then IFD0 at offset 8: a count, 12-byte entries, the next
        // directory's offset (none), then the values that do not fit in four bytes.
        var output: [UInt8] = [0x49, 0x49, 42, 0] + littleEndian(8, 4) + littleEndian(fields.count, 2)
        var values: [UInt8] = []
        let valuesStart = 8 + 2 + fields.count * 12 + 4
        for field in fields {
            output += littleEndian(field.tag, 2) + littleEndian(2, 2) + littleEndian(field.value.count, 4)
            if field.value.count <= 4 {
                output += field.value + [UInt8](repeating: 0, count: 4 - field.value.count)
            } else {
                output += littleEndian(valuesStart + values.count, 4)
                values += field.value
                if values.count % 2 == 1 { values.append(0) }  // values start on a word boundary
            }
        }
        return Data(output + littleEndian(0, 4) + values)
    }

    /// The TIFF structure inside an EXIF payload as containers store it:
    /// bare, after JPEG's "Exif\0\0", or after HEIF's four-byte offset to
    /// the header; nil if none is found.
    static func tiffStructure(in payload: UnsafeRawBufferPointer) -> Data? {
        if let bare = EXIF(payload) { return Data(bare.bytes) }
        if let afterPrefix = payload.dropping(prefix: "Exif\0\0"), let exif = EXIF(afterPrefix) { return Data(exif.bytes) }
        guard payload.count >= 4 else { return nil }
        let offset = (0..<4).reduce(0) { $0 << 8 | Int(payload[$1]) }
        guard offset <= payload.count - 4, let exif = EXIF(UnsafeRawBufferPointer(rebasing: payload[(4 + offset)...])) else { return nil }
        return Data(exif.bytes)
    }
}
