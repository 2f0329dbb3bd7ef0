/// The one place integers become little-endian bytes and back: the disk
/// formats (entry files, the index snapshot, HTTP metadata) are all
/// little-endian, whatever the machine.
extension Array where Element == UInt8 {
    /// Appends `value` as `T.bitWidth / 8` little-endian bytes.
    package mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

extension UnsafeRawBufferPointer {
    /// The little-endian `T` at `offset`; the caller has checked that it fits.
    package func loadLittleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

/// Bounds-checked reads from untrusted bytes: every read that would pass the
/// end returns `nil` instead of trapping.
package struct ByteReader {
    private let bytes: [UInt8]
    package private(set) var offset = 0

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    package var isAtEnd: Bool { offset == bytes.count }

    /// The next `count` bytes, or `nil` if fewer remain.
    package mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// The next little-endian `T`, or `nil` if too few bytes remain.
    package mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let slice = take(MemoryLayout<T>.size) else { return nil }
        return slice.withUnsafeBytes { $0.loadLittleEndian(at: 0) }
    }
}
