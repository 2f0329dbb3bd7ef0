import Foundation

/// The value the crash-consistency child stores for a key at a version: its
/// body is derived from both, and its metadata names both, so a reader can
/// tell which version it got and check every byte of it.
public struct TortureValue: Sendable, Equatable {
    public var key: String
    public var version: Int

    public init(key: String, version: Int) {
        self.key = key
        self.version = version
    }

    /// Parses metadata written by ``metadata``.
    public init?(metadata: Data) {
        let parts = String(decoding: metadata, as: UTF8.self).split(separator: "|")
        guard parts.count == 2, let version = Int(parts[1]) else { return nil }
        self.init(key: String(parts[0]), version: version)
    }

    public var metadata: Data {
        Data("\(key)|\(version)".utf8)
    }

    /// 0 to 40,000 bytes, different for every key and version.
    public var body: Data {
        var generator = SeededGenerator(seed: UInt64(truncatingIfNeeded: version) &* 0x9E37_79B9 ^ UInt64(truncatingIfNeeded: key.hashValueStable))
        let count = Int(generator.next() % 40_000)
        let words = (0..<(count + 7) / 8).map { _ in generator.next() }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }
}

extension String {
    /// FNV-1a of the UTF-8 bytes: stable across processes, unlike `hashValue`.
    var hashValueStable: UInt64 {
        utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }
}
