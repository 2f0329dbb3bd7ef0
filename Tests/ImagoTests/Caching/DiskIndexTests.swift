import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("DiskIndex and IndexSnapshot")
struct DiskIndexTests {
    @Test("random inserts, touches and removals agree with a model and keep the invariants")
    func randomOperations() {
        var generator = SeededGenerator(seed: 11)
        var index = DiskIndex()
        var model: [String: Int64] = [:]
        var order: [String] = []  // least recently used first
        for step in 0..<20_000 {
            let key = "k\(Int.random(in: 0..<300, using: &generator))"
            let hash = EntryHash(key: key)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                let size = Int64.random(in: 0...10_000, using: &generator)
                index.insert(hash, size: size, accessTime: Int64(step))
                model[key] = size
                order.removeAll { $0 == key }
                order.append(key)
            case 4..<7:
                #expect(index.touch(hash, at: Int64(step))?.size == model[key])
                if model[key] != nil {
                    order.removeAll { $0 == key }
                    order.append(key)
                }
            case 7..<9:
                #expect(index.remove(hash)?.size == model.removeValue(forKey: key))
                order.removeAll { $0 == key }
            default:
                #expect(index.leastRecentlyUsed()?.hash == order.first.map { EntryHash(key: $0) })
            }
        }
        #expect(index.checkInvariants().isEmpty)
        #expect(index.totalSize == model.values.reduce(0, +))
        #expect(index.oldestFirst.map(\.hash) == order.map { EntryHash(key: $0) })
    }

    @Test("a snapshot round-trips; any truncation or flipped byte is rejected")
    func snapshotCodec() {
        let entries: [IndexSnapshot.Entry] = (0..<100).map { (EntryHash(key: "k\($0)"), Int64($0 * 10), Int64(1_000 + $0)) }
        let folders: [Int64?] = (0..<256).map { $0 % 3 == 0 ? nil : Int64($0) * 1_000_000_007 }
        let snapshot = IndexSnapshot(writtenAt: 123_456_789, folderModificationTimes: folders, entries: entries)
        let bytes = snapshot.encoded()
        let decoded = IndexSnapshot(decoding: bytes)
        #expect(decoded?.writtenAt == 123_456_789)
        #expect(decoded?.folderModificationTimes == folders)
        #expect(decoded?.entries.map(\.hash) == entries.map(\.hash))
        #expect(decoded?.entries.map(\.size) == entries.map(\.size))
        #expect(decoded?.entries.map(\.accessTime) == entries.map(\.accessTime))
        for cut in [0, 3, 100, bytes.count - 1] {
            #expect(IndexSnapshot(decoding: Array(bytes.prefix(cut))) == nil)
        }
        for position in stride(from: 0, to: bytes.count, by: 97) {
            var damaged = bytes
            damaged[position] ^= 0x04
            #expect(IndexSnapshot(decoding: damaged) == nil, "flip at \(position) accepted")
        }
        // A count that claims more entries than the file holds.
        var forged = bytes
        for i in 16..<24 { forged[i] = 0xFF }
        #expect(IndexSnapshot(decoding: forged) == nil)
    }

    @Test("a folder is trusted only if unchanged and last modified well before the snapshot")
    func trust() {
        // Whole-second timestamps (ext3, FAT): a 2 s margin.
        let coarse = IndexSnapshot(
            writtenAt: 10_000_000_000,
            folderModificationTimes: [nil, 5_000_000_000, 9_000_000_000] + Array(repeating: nil, count: 253), entries: [])
        #expect(coarse.trustMarginNanoseconds == 2_000_000_000)
        let margin = coarse.trustMarginNanoseconds
        #expect(coarse.trusts(folder: 0, modifiedAt: nil, margin: margin))
        #expect(!coarse.trusts(folder: 0, modifiedAt: 1, margin: margin))
        #expect(coarse.trusts(folder: 1, modifiedAt: 5_000_000_000, margin: margin))
        #expect(!coarse.trusts(folder: 1, modifiedAt: 5_000_000_001, margin: margin))
        #expect(!coarse.trusts(folder: 2, modifiedAt: 9_000_000_000, margin: margin))  // within the margin
        // Sub-second timestamps (ext4, tmpfs): only the coarse clock's tick matters.
        let fine = IndexSnapshot(
            writtenAt: 10_000_000_000,
            folderModificationTimes: [9_800_000_123, 9_950_000_456] + Array(repeating: nil, count: 254), entries: [])
        #expect(fine.trustMarginNanoseconds == 100_000_000)
        #expect(fine.trusts(folder: 0, modifiedAt: 9_800_000_123, margin: fine.trustMarginNanoseconds))
        #expect(!fine.trusts(folder: 1, modifiedAt: 9_950_000_456, margin: fine.trustMarginNanoseconds))
    }

    @Test("file names round-trip through EntryHash; other names are rejected")
    func fileNames() {
        let hash = EntryHash(key: "https://example.com/x.png")
        #expect(EntryHash(fileName: hash.fileName) == hash)
        #expect(hash.fileName.count == 64)
        #expect(hash.fileName.hasPrefix(EntryHash.shardName(hash.shard)))
        for name in ["", "abc", String(repeating: "g", count: 64), String(repeating: "A", count: 64), hash.fileName + "0", ".tmp-1-2"] {
            #expect(EntryHash(fileName: name) == nil, "accepted \(name)")
        }
    }
}
