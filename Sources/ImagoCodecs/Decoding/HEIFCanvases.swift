import Foundation

/// The canvases of a HEIF file's derived images (ISO/IEC 23008-12: a
/// `grid`'s output size, an `iovl`'s canvas), read from their item data
/// before libheif sees the file. libheif 1.15 allocates a derived image at
/// the size its data declares, up to 32767 pixels a side, before it decodes
/// a tile and without comparing it with the size the `ispe` property
/// declares (the size checked against the pixel limit): a few bytes can ask
/// it for gigabytes.
enum HEIFCanvases {
    /// The size of every `grid` and `iovl` item whose data can be read, as
    /// libheif reads it: the item types from `iinf`, their data through
    /// `iloc` (in the file, or in `idat`). An item listed twice is measured
    /// at each of its locations.
    static func sizes(in data: Data) -> [ImageSize] {
        data.withUnsafeBytes { file in
            guard let meta = HEIFBoxes.child("meta", of: file[...]), meta.count >= 4 else { return [] }
            let boxes = meta.dropFirst(4)
            let derived = derivedItems(in: boxes)
            guard !derived.isEmpty, let iloc = HEIFBoxes.child("iloc", of: boxes) else { return [] }
            let idat = HEIFBoxes.child("idat", of: boxes)
            return locations(in: iloc).compactMap { location -> ImageSize? in
                guard let type = derived[location.item] else { return nil }
                let header = bytes(at: location, count: 20, file: file, idat: idat)
                return type == "grid" ? gridSize(header) : overlaySize(header)
            }
        }
    }

    /// The `grid` and `iovl` items named by `iinf`'s entries of version 2
    /// and 3 (the earlier ones name no type).
    private static func derivedItems(in meta: HEIFBoxes.Bytes) -> [UInt32: String] {
        guard let iinf = HEIFBoxes.child("iinf", of: meta), let version = iinf.first else { return [:] }
        var entries = iinf.dropFirst(4 + (version == 0 ? 2 : 4))
        var items: [UInt32: String] = [:]
        while let (type, body, rest) = HEIFBoxes.nextBox(entries) {
            entries = rest
            guard type == "infe", let entryVersion = body.first, entryVersion >= 2 else { continue }
            var reader = body.dropFirst(4)
            guard let item = HEIFBoxes.integer(&reader, size: entryVersion == 2 ? 2 : 4), reader.count >= 6 else { continue }
            let itemType = String(decoding: reader.dropFirst(2).prefix(4), as: UTF8.self)
            if itemType == "grid" || itemType == "iovl" { items[item] = itemType }
        }
        return items
    }

    /// Where an item's data lies: its extents, from the file's start
    /// (construction method 0) or `idat`'s (1).
    private struct Location {
        var item: UInt32
        var inIdat: Bool
        var extents: [(offset: Int, length: Int)]
    }

    /// `iloc`'s entries, read field by field as libheif reads them (offsets
    /// and lengths of 4 or 8 bytes, any other size read as 0); the entries
    /// read before the box runs out.
    private static func locations(in iloc: HEIFBoxes.Bytes) -> [Location] {
        guard let version = iloc.first else { return [] }
        var reader = iloc.dropFirst(4)
        guard let sizes = HEIFBoxes.integer(&reader, size: 2),
            let count = HEIFBoxes.integer(&reader, size: version < 2 ? 2 : 4)
        else { return [] }
        let (offsetSize, lengthSize, baseSize) = (Int(sizes >> 12 & 0xF), Int(sizes >> 8 & 0xF), Int(sizes >> 4 & 0xF))
        let indexSize = version > 1 ? Int(sizes & 0xF) : 0
        func field(_ size: Int) -> Int? {
            switch size {
            case 4: return HEIFBoxes.integer(&reader, size: 4).map(Int.init)
            case 8: return HEIFBoxes.integer64(&reader)
            default: return 0
            }
        }
        var locations: [Location] = []
        for _ in 0..<min(Int(count), 20_000) {
            guard let item = HEIFBoxes.integer(&reader, size: version < 2 ? 2 : 4) else { break }
            var method: UInt32 = 0
            if version >= 1 { method = (HEIFBoxes.integer(&reader, size: 2) ?? 0) & 0xF }
            guard HEIFBoxes.integer(&reader, size: 2) != nil, let base = field(baseSize),
                let extentCount = HEIFBoxes.integer(&reader, size: 2)
            else { break }
            var extents: [(offset: Int, length: Int)] = []
            for _ in 0..<min(Int(extentCount), 32) {
                if indexSize > 0 { _ = field(indexSize) }
                guard let offset = field(offsetSize), let length = field(lengthSize) else { break }
                let (start, overflow) = base.addingReportingOverflow(offset)
                if !overflow { extents.append((start, length)) }
            }
            if method <= 1 { locations.append(Location(item: item, inIdat: method == 1, extents: extents)) }
        }
        return locations
    }

    /// The first `count` bytes (or fewer) of the item's data, its extents
    /// joined.
    private static func bytes(at location: Location, count: Int, file: UnsafeRawBufferPointer, idat: HEIFBoxes.Bytes?) -> [UInt8] {
        let source: HEIFBoxes.Bytes
        if location.inIdat {
            guard let idat else { return [] }
            source = idat
        } else {
            source = file[...]
        }
        var joined: [UInt8] = []
        for extent in location.extents where joined.count < count {
            guard extent.offset >= 0, extent.offset < source.count else { break }
            let start = source.startIndex + extent.offset
            // In idat a length of 0 reads to its end.
            let length = extent.length == 0 && location.inIdat ? source.count - extent.offset : extent.length
            joined += source[start..<(start + min(length, source.count - extent.offset, count - joined.count))]
        }
        return joined
    }

    /// A grid's output size: version, flags, rows and columns less one, then
    /// the width and height in 16 bits, or 32 with flag 1.
    private static func gridSize(_ header: [UInt8]) -> ImageSize? {
        guard header.count >= 2 else { return nil }
        return size(header, at: 4, wide: header[1] & 1 != 0)
    }

    /// An overlay's canvas: version, flags, four 16-bit fill values, then
    /// the width and height in 16 bits, or 32 with flag 1.
    private static func overlaySize(_ header: [UInt8]) -> ImageSize? {
        guard header.count >= 2 else { return nil }
        return size(header, at: 10, wide: header[1] & 1 != 0)
    }

    private static func size(_ header: [UInt8], at start: Int, wide: Bool) -> ImageSize? {
        let field = wide ? 4 : 2
        guard header.count >= start + 2 * field else { return nil }
        func value(_ offset: Int) -> Int { header[offset..<(offset + field)].reduce(0) { $0 << 8 | Int($1) } }
        return ImageSize(width: value(start), height: value(start + field))
    }
}
