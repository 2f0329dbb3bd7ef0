import Foundation

extension EXIF {
    /// The tags of a TIFF file's first directory that an EXIF block's IFD0
    /// holds: ImageDescription, Make, Model, Orientation, Software,
    /// DateTime, Artist, Copyright.
    static let descriptiveTags: Set<Int> = [0x010E, 0x010F, 0x0110, orientationTag, 0x0131, 0x0132, artistTag, copyrightTag]
    /// The pointers to the EXIF and GPS directories.
    static let exifDirectoryTag = 0x8769
    static let gpsDirectoryTag = 0x8825
    /// Tags of the EXIF directory that are not copied: the pointer to the
    /// interoperability directory and the maker note, whose offsets would
    /// point nowhere in a new block.
    static let uncopiedTags: Set<Int> = [0xA005, 0x927C]

    /// An EXIF block made from a TIFF file's own tags (a TIFF file has no
    /// EXIF block: its first directory is one, with pointers to the EXIF
    /// and GPS directories): the descriptive tags of its first directory,
    /// and the EXIF and GPS directories copied, in the file's byte order.
    /// Nil if the file has none of them.
    func blockFromTIFFFile() -> Data? {
        let fileEntries = entries
        let firstValues = fileEntries.filter { Self.descriptiveTags.contains($0.tag) }.compactMap { entry in value(entry).map { (entry, $0) } }
        // The sub-directories, each copied without the entries that point elsewhere.
        let subdirectoryValues = [Self.exifDirectoryTag, Self.gpsDirectoryTag].compactMap { tag -> (Int, [(Entry, UnsafeRawBufferPointer)])? in
            guard let pointer = fileEntries.first(where: { $0.tag == tag }), let offset = integer(pointer) else { return nil }
            let copied = entries(at: offset).filter { !Self.uncopiedTags.contains($0.tag) && $0.type != 13 }
                .compactMap { entry in value(entry).map { (entry, $0) } }
            return copied.isEmpty ? nil : (tag, copied)
        }
        // Values may overlap in the file: what is copied is bounded before copying.
        let total = (firstValues + subdirectoryValues.flatMap(\.1)).reduce(0) { $0 + $1.1.count }
        guard total <= ImageMetadata.maximumBlockSize else { return nil }
        var first = firstValues.map { ($0.0, [UInt8]($0.1)) }
        let subdirectories = subdirectoryValues.map { tag, values in (tag, values.map { ($0.0, [UInt8]($0.1)) }) }
        guard !first.isEmpty || !subdirectories.isEmpty else { return nil }
        // The pointers' values are set once the first directory's length is known.
        for (tag, _) in subdirectories {
            first.append((Entry(tag: tag, type: 4, count: 1, position: 0), [0, 0, 0, 0]))
        }
        first.sort { $0.0.tag < $1.0.tag }
        var offsets: [Int: Int] = [:]
        var next = 8 + Self.directoryLength(first)
        for (tag, copied) in subdirectories {
            offsets[tag] = next
            next += Self.directoryLength(copied)
        }
        first = first.map { entry, value in
            guard let offset = offsets[entry.tag] else { return (entry, value) }
            return (entry, encode(offset, 4))
        }
        var output: [UInt8] = [bytes[0], bytes[1]] + encode(42, 2) + encode(8, 4)
        appendDirectory(first, to: &output)
        for (_, copied) in subdirectories.sorted(by: { offsets[$0.0, default: 0] < offsets[$1.0, default: 0] }) {
            appendDirectory(copied, to: &output)
        }
        return Data(output)
    }

    /// The bytes a directory of `entries` takes: its count, its entries, the
    /// next directory's offset, and the values longer than four bytes,
    /// each padded to an even length.
    private static func directoryLength(_ entries: [(Entry, [UInt8])]) -> Int {
        2 + 12 * entries.count + 4 + entries.reduce(0) { $0 + ($1.1.count > 4 ? $1.1.count + $1.1.count % 2 : 0) }
    }

    /// Appends a directory, its values after it; the values are already in
    /// the block's byte order.
    private func appendDirectory(_ entries: [(Entry, [UInt8])], to output: inout [UInt8]) {
        let start = output.count
        var values: [UInt8] = []
        let valuesStart = start + 2 + 12 * entries.count + 4
        output += encode(entries.count, 2)
        for (entry, value) in entries {
            output += encode(entry.tag, 2) + encode(entry.type, 2) + encode(entry.count, 4)
            if value.count <= 4 {
                output += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                output += encode(valuesStart + values.count, 4)
                values += value
                if value.count % 2 == 1 { values.append(0) }
            }
        }
        output += encode(0, 4) + values
    }

    /// `value` as `size` bytes in the block's byte order.
    private func encode(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * (isBigEndian ? size - 1 - $0 : $0))) }
    }
}
