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
        guard let meta = HEIFBoxes.child("meta", of: file[...]), meta.count >= 4,
            let iref = HEIFBoxes.child("iref", of: meta.dropFirst(4)), let version = iref.first
        else { return nil }
        let idSize = version == 0 ? 2 : 4
        var edges: [UInt32: [UInt32]] = [:]
        var reader = iref.dropFirst(4)
        while !reader.isEmpty {
            let size = HEIFBoxes.integer(&reader, size: 4)
            guard let type = reader.count >= 4 ? String(decoding: reader.prefix(4), as: UTF8.self) : nil else { break }
            reader = reader.dropFirst(4)
            if size == 1 { _ = HEIFBoxes.integer64(&reader) }
            if type == "uuid" { reader = reader.dropFirst(16) }
            let from = HEIFBoxes.integer(&reader, size: idSize) ?? 0
            let count = HEIFBoxes.integer(&reader, size: 2) ?? 0
            var targets: [UInt32] = []
            for _ in 0..<count {
                targets.append(HEIFBoxes.integer(&reader, size: idSize) ?? 0)
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
}
