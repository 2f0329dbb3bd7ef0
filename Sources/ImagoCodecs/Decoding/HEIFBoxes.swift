import Foundation

/// Reading ISO base media boxes (ISO/IEC 14496-12) as libheif 1.15 reads
/// them, for the checks done on a HEIF file before libheif sees it.
enum HEIFBoxes {
    typealias Bytes = Slice<UnsafeRawBufferPointer>

    /// The body of the first box of `type` among `boxes`; `nil` if there
    /// is none before a box that does not fit (which libheif refuses).
    static func child(_ type: String, of boxes: Bytes) -> Bytes? {
        var rest = boxes
        while let (found, body, next) = nextBox(rest) {
            if found == type { return body }
            rest = next
        }
        return nil
    }

    /// The first box of `boxes`: its type, its body, and what follows it;
    /// `nil` at the end or at a box that does not fit.
    static func nextBox(_ boxes: Bytes) -> (type: String, body: Bytes, rest: Bytes)? {
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
    static func integer(_ reader: inout Bytes, size: Int) -> UInt32? {
        guard reader.count >= size else {
            reader = reader.suffix(0)
            return nil
        }
        let value = reader.prefix(size).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        reader = reader.dropFirst(size)
        return value
    }

    static func integer64(_ reader: inout Bytes) -> Int? {
        guard reader.count >= 8 else { return nil }
        let value = reader.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        reader = reader.dropFirst(8)
        return value > UInt64(Int.max) ? nil : Int(value)
    }
}
