import Crypto

/// The SHA-256 digest of a cache key: the entry's file name (64 hex digits)
/// and its identity in the disk cache's index.
struct EntryHash: Hashable, Sendable {
    var words: (UInt64, UInt64, UInt64, UInt64)

    static let byteCount = 32

    init(key: String) {
        var words = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        SHA256.hash(data: Array(key.utf8)).withUnsafeBytes { digest in
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: digest) }
        }
        self.words = words
    }

    /// Reads a hash stored by ``write(to:)``.
    init(bytes: UnsafeRawBufferPointer) {
        var words = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.byteCount))) }
        self.words = words
    }

    /// Parses a file name of 64 lowercase hex digits; nil for anything else.
    init?(fileName: String) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.byteCount)
        var utf8 = fileName.utf8.makeIterator()
        while let high = utf8.next() {
            guard let low = utf8.next(), let h = Self.nibble(high), let l = Self.nibble(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        guard bytes.count == Self.byteCount else { return nil }
        self = bytes.withUnsafeBytes { EntryHash(bytes: $0) }
    }

    /// The digest's bytes, in order.
    func write(to buffer: inout [UInt8]) {
        withUnsafeBytes(of: words) { buffer.append(contentsOf: $0) }
    }

    /// The sub-folder (0...255) the entry lives in: the digest's first byte.
    var shard: Int {
        withUnsafeBytes(of: words) { Int($0[0]) }
    }

    /// The file name: the digest in lowercase hex.
    var fileName: String {
        withUnsafeBytes(of: words) { digest in
            String(unsafeUninitializedCapacity: Self.byteCount * 2) { out in
                for (i, byte) in digest.enumerated() {
                    out[2 * i] = Self.hexDigits[Int(byte >> 4)]
                    out[2 * i + 1] = Self.hexDigits[Int(byte & 0x0F)]
                }
                return Self.byteCount * 2
            }
        }
    }

    static func shardName(_ shard: Int) -> String {
        String(decoding: [hexDigits[shard >> 4], hexDigits[shard & 0x0F]], as: UTF8.self)
    }

    static func == (lhs: EntryHash, rhs: EntryHash) -> Bool {
        lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        // The digest is already uniformly distributed; one word is plenty.
        hasher.combine(words.1)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
