/// A saved copy of the disk cache's index, so that opening a large cache does
/// not have to list and stat every file (the approach of Chromium's "simple"
/// disk cache).
///
/// Alongside the records it keeps the modification time of each of the 256
/// sub-folders when it was taken. On open, a folder whose modification time
/// changed since (an entry was added, replaced or removed there, by a process
/// that then crashed before saving again, or by hand) is listed again; the
/// others are taken from the snapshot as they are.
///
/// ```
/// "IMGX" | version u32 | writtenAt i64 (ns) | count u64
/// | 256 x folder modification time i64 (ns, -1 = missing)
/// | count x (hash 32 bytes | size i64 | access time i64), least recently used first
/// | checksum u64 (XXH64 of everything before it)
/// ```
struct IndexSnapshot: Sendable {
    typealias Entry = (hash: EntryHash, size: Int64, accessTime: Int64)

    static let folderCount = 256
    private static let magic: [UInt8] = Array("IMGX".utf8)
    private static let version: UInt32 = 1
    private static let headerSize = 4 + 4 + 8 + 8 + folderCount * 8
    private static let entrySize = EntryHash.byteCount + 16

    /// When the snapshot was taken: wall-clock nanoseconds, the clock of file
    /// modification times.
    var writtenAt: Int64
    /// Each sub-folder's modification time when the snapshot was taken.
    var folderModificationTimes: [Int64?]
    /// The entries, least recently used first.
    var entries: [Entry]

    init(writtenAt: Int64, folderModificationTimes: [Int64?], entries: [Entry]) {
        self.writtenAt = writtenAt
        self.folderModificationTimes = folderModificationTimes
        self.entries = entries
    }

    /// How long before the snapshot a folder must have been last modified for
    /// its listing to be trusted. File systems stamp times from a coarse clock,
    /// so a change made shortly after an earlier one can leave the time
    /// unchanged: a few milliseconds on Linux file systems with sub-second
    /// timestamps (ext4, tmpfs, xfs, btrfs; APFS too), whole seconds on ext3
    /// or HFS+, two on FAT. Sub-second digits in the recorded times tell which.
    var trustMarginNanoseconds: Int64 {
        let fine = folderModificationTimes.contains { ($0 ?? 0) % 1_000_000_000 != 0 }
        return fine ? 100_000_000 : 2_000_000_000
    }

    /// Whether a folder's listing in this snapshot can be trusted, given the
    /// folder's modification time now: unchanged, and older than the snapshot
    /// by more than the margin.
    func trusts(folder: Int, modifiedAt current: Int64?, margin: Int64) -> Bool {
        let recorded = folderModificationTimes[folder]
        guard recorded == current else { return false }
        guard let current else { return true }
        return current < writtenAt - margin
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize + entries.count * Self.entrySize + 8)
        bytes.append(contentsOf: Self.magic)
        bytes.appendLittleEndian(Self.version)
        bytes.appendLittleEndian(writtenAt)
        bytes.appendLittleEndian(UInt64(entries.count))
        for time in folderModificationTimes { bytes.appendLittleEndian(time ?? -1) }
        for entry in entries {
            entry.hash.write(to: &bytes)
            bytes.appendLittleEndian(entry.size)
            bytes.appendLittleEndian(entry.accessTime)
        }
        bytes.appendLittleEndian(Checksum.hash(bytes))
        return bytes
    }

    /// Decodes a snapshot; nil if it is truncated, corrupt or of another version.
    init?(decoding bytes: [UInt8]) {
        guard bytes.count >= Self.headerSize + 8, bytes.starts(with: Self.magic) else { return nil }
        let decoded: IndexSnapshot? = bytes.withUnsafeBytes { raw in
            func load<T: FixedWidthInteger>(_ offset: Int) -> T { raw.loadLittleEndian(at: offset) }
            guard load(4) as UInt32 == Self.version else { return nil }
            let count = load(16) as UInt64
            guard count <= UInt64(raw.count / Self.entrySize),
                Self.headerSize + Int(count) * Self.entrySize + 8 == raw.count
            else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 8)])
            guard Checksum.hash(body) == load(raw.count - 8) else { return nil }
            let folders: [Int64?] = (0..<Self.folderCount).map { folder in
                let time: Int64 = load(24 + folder * 8)
                return time < 0 ? nil : time
            }
            var entries: [Entry] = []
            entries.reserveCapacity(Int(count))
            var offset = Self.headerSize
            for _ in 0..<Int(count) {
                let hash = EntryHash(bytes: UnsafeRawBufferPointer(rebasing: raw[offset...]))
                entries.append((hash, load(offset + 32), load(offset + 40)))
                offset += Self.entrySize
            }
            return IndexSnapshot(writtenAt: load(8), folderModificationTimes: folders, entries: entries)
        }
        guard let decoded else { return nil }
        self = decoded
    }
}
