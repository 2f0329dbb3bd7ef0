import Foundation

/// XXH64 (Yann Collet's xxHash, 64-bit variant), written from the published
/// algorithm description. Used to detect torn or corrupted cache files: it is
/// several times faster than SHA-256 and is not meant to resist an adversary
/// who can write to the cache folder.
package struct Checksum {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The XXH64 hash of `bytes` with the given seed. Chain several buffers by
    /// passing one hash as the next seed.
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return finish(seed &+ prime5, tail: bytes, length: 0) }
        var offset = 0
        var h: UInt64
        if count >= 32 {
            var v1 = seed &+ prime1 &+ prime2
            var v2 = seed &+ prime2
            var v3 = seed
            var v4 = seed &- prime1
            while offset + 32 <= count {
                v1 = round(v1, base.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
                v2 = round(v2, base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self).littleEndian)
                v3 = round(v3, base.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self).littleEndian)
                v4 = round(v4, base.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self).littleEndian)
                offset += 32
            }
            h = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            h = merge(h, v1)
            h = merge(h, v2)
            h = merge(h, v3)
            h = merge(h, v4)
        } else {
            h = seed &+ prime5
        }
        return finish(h, tail: UnsafeRawBufferPointer(rebasing: bytes[offset...]), length: count)
    }

    static func hash<Bytes: ContiguousBytes>(_ bytes: Bytes, seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    private static func finish(_ start: UInt64, tail: UnsafeRawBufferPointer, length: Int) -> UInt64 {
        var h = start &+ UInt64(truncatingIfNeeded: length)
        var offset = 0
        let count = tail.count
        if let base = tail.baseAddress {
            while offset + 8 <= count {
                let lane = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
                h ^= round(0, lane)
                h = rotate(h, 27) &* prime1 &+ prime4
                offset += 8
            }
            if offset + 4 <= count {
                let lane = UInt64(base.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
                h ^= lane &* prime1
                h = rotate(h, 23) &* prime2 &+ prime3
                offset += 4
            }
            while offset < count {
                h ^= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) &* prime5
                h = rotate(h, 11) &* prime1
                offset += 1
            }
        }
        h ^= h >> 33
        h = h &* prime2
        h ^= h >> 29
        h = h &* prime3
        h ^= h >> 32
        return h
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        rotate(accumulator &+ lane &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ accumulator: UInt64, _ value: UInt64) -> UInt64 {
        (accumulator ^ round(0, value)) &* prime1 &+ prime4
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }
}
