import Foundation

/// The item references of a HEIF file (ISO/IEC 23008-12: the `iref` box in
/// the top-level `meta`), read before libheif sees the file. libheif 1.15
/// follows them by recursion while decoding: a grid whose tile is the grid
/// itself, or a chain of derived images thousands deep, overflows the
/// thread's stack and kills the process. A file whose references loop, or
/// nest deeper than ``maximumDepth``, is refused first.
enum HEIFItemReferences {
    /// Derived images on derived images deeper than this are refused: real
    /// files nest two or three (a grid of tiles, an alpha plane for it).
    static let maximumDepth = 16

    /// Why the file's references cannot be decoded safely; `nil` if they can
    /// (or the file has none, or is too damaged to tell: libheif reports that).
    static func problem(in data: Data) -> String? {
        data.withUnsafeBytes { bytes in
            guard let references = edges(in: bytes) else { return nil }
            return problem(in: references)
        }
    }

    /// The references as edges, item to the items its decoding may need:
    /// a derived image to its sources, an image to its auxiliary images
    /// (alpha, depth) and thumbnails, and any other reference from its
    /// source to its target. Read as libheif 1.15 reads them: the first
    /// `meta`, its first `iref`, whose entries are read one after another
    /// whatever sizes they declare (an entry cut short counts its targets
    /// as item 0). `nil` if there is none, or if libheif would refuse the
    /// boxes around it.
    private static func edges(in file: UnsafeRawBufferPointer) -> [UInt32: [UInt32]]? {
        guard let meta = child("meta", of: file[...]), meta.count >= 4,
            let iref = child("iref", of: meta.dropFirst(4)), let version = iref.first
        else { return nil }
        let idSize = version == 0 ? 2 : 4
        var edges: [UInt32: [UInt32]] = [:]
        var reader = iref.dropFirst(4)
        while !reader.isEmpty {
            let size = integer(&reader, size: 4)
            guard let type = reader.count >= 4 ? String(decoding: reader.prefix(4), as: UTF8.self) : nil else { break }
            reader = reader.dropFirst(4)
            if size == 1 { _ = integer64(&reader) }
            if type == "uuid" { reader = reader.dropFirst(16) }
            let from = integer(&reader, size: idSize) ?? 0
            let count = integer(&reader, size: 2) ?? 0
            var targets: [UInt32] = []
            for _ in 0..<count {
                targets.append(integer(&reader, size: idSize) ?? 0)
                if reader.isEmpty { break }
            }
            switch type {
            case "auxl", "thmb": for target in targets { edges[target, default: []].append(from) }
            default: edges[from, default: []] += targets
            }
        }
        return edges
    }

    /// A loop, or a chain longer than ``maximumDepth``, found depth-first
    /// with a stack of its own (the file must not decide this one's depth).
    /// Each item's height (the longest chain below it) is kept once it is
    /// done, so the answer does not depend on where the search starts.
    private static func problem(in edges: [UInt32: [UInt32]]) -> String? {
        enum Mark {
            case onPath
            case done(height: Int)
        }
        var marks: [UInt32: Mark] = [:]
        for root in edges.keys where marks[root] == nil {
            var path: [(item: UInt32, next: Int, height: Int)] = [(root, 0, 1)]
            marks[root] = .onPath
            while let (item, next, height) = path.last {
                let targets = edges[item] ?? []
                guard next < targets.count else {
                    marks[item] = .done(height: height)
                    path.removeLast()
                    if !path.isEmpty { path[path.count - 1].height = max(path[path.count - 1].height, height + 1) }
                    if height > maximumDepth { return "derived images nest deeper than \(maximumDepth)" }
                    continue
                }
                path[path.count - 1].next += 1
                let target = targets[next]
                switch marks[target] {
                case .onPath: return "item \(target) is derived from itself"
                case .done(let below): path[path.count - 1].height = max(height, below + 1)
                case nil:
                    marks[target] = .onPath
                    path.append((target, 0, 1))
                }
            }
        }
        return nil
    }

    private typealias Bytes = Slice<UnsafeRawBufferPointer>

    /// The body of the first box of `type` among `boxes`; `nil` if there
    /// is none before a box that does not fit (which libheif refuses).
    private static func child(_ type: String, of boxes: Bytes) -> Bytes? {
        var rest = boxes
        while let (found, body, next) = nextBox(rest) {
            if found == type { return body }
            rest = next
        }
        return nil
    }

    /// The first box of `boxes`: its type, its body, and what follows it;
    /// `nil` at the end or at a box that does not fit.
    private static func nextBox(_ boxes: Bytes) -> (type: String, body: Bytes, rest: Bytes)? {
        var reader = boxes
        guard let size32 = integer(&reader, size: 4), reader.count >= 4 else { return nil }
        let type = String(decoding: reader.prefix(4), as: UTF8.self)
        reader = reader.dropFirst(4)
        var size = Int(size32)
        var header = 8
        if size32 == 1 {
            guard let large = integer64(&reader) else { return nil }
            size = large
            header = 16
        } else if size32 == 0 {
            size = boxes.count
        }
        guard size >= header, size <= boxes.count else { return nil }
        let body = boxes[(boxes.startIndex + header)..<(boxes.startIndex + size)]
        return (type, body, boxes[(boxes.startIndex + size)...])
    }

    /// A big-endian integer of `size` bytes; `nil`, with nothing left to
    /// read, if fewer remain (as libheif's reader skips to the box's end).
    private static func integer(_ reader: inout Bytes, size: Int) -> UInt32? {
        guard reader.count >= size else {
            reader = reader.suffix(0)
            return nil
        }
        let value = reader.prefix(size).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        reader = reader.dropFirst(size)
        return value
    }

    private static func integer64(_ reader: inout Bytes) -> Int? {
        guard reader.count >= 8 else { return nil }
        let value = reader.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        reader = reader.dropFirst(8)
        return value > UInt64(Int.max) ? nil : Int(value)
    }
}
