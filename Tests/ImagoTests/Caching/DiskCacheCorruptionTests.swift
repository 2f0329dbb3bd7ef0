import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("DiskCache corruption")
struct DiskCacheCorruptionTests {
    let folder = TemporaryDirectory()

    func open() throws -> DiskCache {
        try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
    }

    func entryPath(_ key: String) -> String {
        let hash = EntryHash(key: key)
        return folder.path + "/" + EntryHash.shardName(hash.shard) + "/" + hash.fileName
    }

    func rewrite(_ path: String, _ change: (inout Data) -> Void) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        change(&bytes)
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    enum Damage: String, CaseIterable, Sendable {
        case flipBodyByte, flipHeaderByte, flipKeyByte, flipMetadataByte
        case truncateBody, truncateToHeader, truncateToZero, appendGarbage
        case forgeHugeBodyLength, replaceWithHTML
        /// What a power cut leaves of a renamed file whose data had not reached the device.
        case zeroTail, truncateToPage
    }

    @Test("a damaged entry is detected on read, removed and reported as a miss", arguments: Damage.allCases)
    func damagedEntry(damage: Damage) throws {
        // Given an entry and a neighbour
        let cache = try open()
        let body = testData(count: 20_000, seed: 3)
        try cache.storeData(body, metadata: Data("meta".utf8), forKey: "victim")
        try cache.storeData(Data("fine".utf8), metadata: Data(), forKey: "neighbour")
        let path = entryPath("victim")
        let bodyStart = EntryFile.headerSize + "victim".utf8.count + 4
        // When its file is damaged behind the cache's back
        try rewrite(path) { bytes in
            switch damage {
            case .flipBodyByte: bytes[bodyStart + 12_345] ^= 0x01
            case .flipHeaderByte: bytes[5] ^= 0x80
            case .flipKeyByte: bytes[EntryFile.headerSize] ^= 0x01
            case .flipMetadataByte: bytes[bodyStart - 1] ^= 0x01
            case .truncateBody: bytes = bytes.prefix(bytes.count - 100)
            case .truncateToHeader: bytes = bytes.prefix(EntryFile.headerSize)
            case .truncateToZero: bytes = Data()
            case .appendGarbage: bytes.append(contentsOf: [1, 2, 3])
            case .forgeHugeBodyLength: bytes.replaceSubrange(16..<24, with: [UInt8](repeating: 0xFF, count: 8))
            case .replaceWithHTML: bytes = Data("<html><body>502 Bad Gateway</body></html>".utf8)
            case .zeroTail: bytes.replaceSubrange((bytes.count - 4096)..., with: Data(count: 4096))
            case .truncateToPage: bytes = bytes.prefix(bytes.count / 4096 * 4096)
            }
        }
        // Then it reads as a miss, its file is gone, and the rest is untouched
        #expect(cache.cachedData(forKey: "victim") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!cache.containsData(forKey: "victim"))
        #expect(cache.cachedData(forKey: "neighbour")?.data == Data("fine".utf8))
        expectConsistent(cache)
    }

    @Test(
        "power loss: entries torn behind a snapshot are misses after a restart, removed, never served",
        arguments: [
            DiskCache.Durability.processCrash, .powerLoss,
        ])
    func tornAfterRestart(durability: DiskCache.Durability) throws {
        // Given entries stored (with or without fsync) and a snapshot that lists them
        let configuration = DiskCache.Configuration(maintenanceInterval: nil, durability: durability)
        let bodies = (0..<3).map { testData(count: 30_000 + $0, seed: UInt64(10 + $0)) }
        do {
            let cache = try DiskCache(path: folder.path, configuration: configuration)
            for (index, body) in bodies.enumerated() { try cache.storeData(body, metadata: Data(), forKey: "entry\(index)") }
            cache.close()
        }
        // When a power cut tears two of them: a zeroed tail, a tail cut at a page boundary
        try rewrite(entryPath("entry0")) { $0.replaceSubrange(($0.count - 4096)..., with: Data(count: 4096)) }
        try rewrite(entryPath("entry1")) { $0 = $0.prefix($0.count / 4096 * 4096) }

        // Then after the restart they read as misses and are gone; the whole one is served
        let cache = try DiskCache(path: folder.path, configuration: configuration)
        #expect(cache.cachedData(forKey: "entry0") == nil && cache.cachedData(forKey: "entry1") == nil)
        #expect(!FileManager.default.fileExists(atPath: entryPath("entry0")))
        #expect(!FileManager.default.fileExists(atPath: entryPath("entry1")))
        #expect(cache.cachedData(forKey: "entry2")?.data == bodies[2])
        expectConsistent(cache)
    }

    @Test("a corrupt or truncated snapshot is ignored and the folders are listed")
    func corruptSnapshot() throws {
        for damage in ["flip", "truncate", "garbage"] {
            do {
                let cache = try open()
                for i in 0..<30 { try cache.storeData(testData(count: 200, seed: UInt64(i)), metadata: Data(), forKey: "k\(i)") }
                try cache.storeData(Data(damage.utf8), metadata: Data(), forKey: damage)
                cache.close()
            }
            try rewrite(folder.appending("index")) { bytes in
                switch damage {
                case "flip": bytes[bytes.count / 2] ^= 0x40
                case "truncate": bytes = bytes.prefix(bytes.count - 9)
                default: bytes = Data(repeating: 0x41, count: 5000)
                }
            }
            let cache = try open()
            #expect(cache.cachedData(forKey: "k3")?.data == testData(count: 200, seed: 3))
            #expect(cache.cachedData(forKey: damage)?.data == Data(damage.utf8))
            expectConsistent(cache)
            cache.close()
        }
    }

    @Test("changes made after the snapshot (a crash, or by hand) are found on open")
    func staleSnapshot() throws {
        // Given a snapshot taken long after the last change, so every folder is trusted
        do {
            let cache = try open()
            for i in 0..<40 { try cache.storeData(Data(count: 100), metadata: Data(), forKey: "k\(i)") }
            cache.close()
        }
        try backdateFoldersAndRewriteSnapshot()
        let hashK1 = EntryHash(key: "k1")
        // When entries are deleted and added behind the snapshot's back, and a write was torn
        try FileManager.default.removeItem(atPath: entryPath("k1"))
        do {
            // A second cache writes "late" and then "crashes" (its snapshot is put back).
            let saved = try Data(contentsOf: URL(fileURLWithPath: folder.appending("index")))
            let other = try open()
            try other.storeData(Data("late".utf8), metadata: Data(), forKey: "late")
            other.close()
            try saved.write(to: URL(fileURLWithPath: folder.appending("index")))
        }
        let torn = folder.path + "/" + EntryHash.shardName(hashK1.shard) + "/.tmp-999-1"
        try Data("half".utf8).write(to: URL(fileURLWithPath: torn))
        // Then reopening sees the files as they are
        let cache = try open()
        #expect(!cache.containsData(forKey: "k1"))
        #expect(cache.cachedData(forKey: "late")?.data == Data("late".utf8))
        #expect(cache.count == 40)
        #expect(!FileManager.default.fileExists(atPath: torn))
        expectConsistent(cache)
    }

    @Test("deleting the whole folder while the cache runs is survived")
    func folderDeleted() throws {
        let cache = try open()
        for i in 0..<20 { try cache.storeData(Data(count: 500), metadata: Data(), forKey: "k\(i)") }
        try FileManager.default.removeItem(atPath: folder.path)
        // Reads miss; the accounting drops what vanished.
        #expect(cache.cachedData(forKey: "k3") == nil)
        // A store recreates the folder and starts an empty index.
        try cache.storeData(Data("back".utf8), metadata: Data(), forKey: "new")
        #expect(cache.cachedData(forKey: "new")?.data == Data("back".utf8))
        #expect(cache.count == 1)
        expectConsistent(cache)
        // The recreated folder is locked again.
        #expect(throws: DiskCacheError.self) { _ = try open() }
        try cache.flush()
        cache.close()
        let reopened = try open()
        #expect(reopened.cachedData(forKey: "new")?.data == Data("back".utf8))
    }

    @Test("deleting one sub-folder drops its entries from the accounting")
    func subfolderDeleted() throws {
        let cache = try open()
        for i in 0..<300 { try cache.storeData(Data(count: 100), metadata: Data(), forKey: "k\(i)") }
        let shard = EntryHash(key: "k0").shard
        try FileManager.default.removeItem(atPath: folder.path + "/" + EntryHash.shardName(shard))
        #expect(cache.cachedData(forKey: "k0") == nil)
        expectConsistent(cache)
        try cache.storeData(Data("x".utf8), metadata: Data(), forKey: "k0")
        #expect(cache.cachedData(forKey: "k0")?.data == Data("x".utf8))
        expectConsistent(cache)
    }

    @Test("foreign files in the folder are ignored")
    func foreignFiles() throws {
        do {
            let cache = try open()
            try cache.storeData(Data("a".utf8), metadata: Data(), forKey: "a")
            cache.close()
        }
        try FileManager.default.removeItem(atPath: folder.appending("index"))
        try FileManager.default.createDirectory(atPath: folder.appending("00"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder.appending("00/notes.txt")))
        try FileManager.default.createDirectory(atPath: folder.appending("zz"), withIntermediateDirectories: true)
        let cache = try open()
        #expect(cache.count == 1)
        #expect(cache.cachedData(forKey: "a") != nil)
    }

    /// Moves every folder's modification time an hour back and saves a new
    /// snapshot, as if the cache had been idle since.
    private func backdateFoldersAndRewriteSnapshot() throws {
        let past = Date().addingTimeInterval(-3600)
        for shard in 0..<256 {
            let path = folder.path + "/" + EntryHash.shardName(shard)
            if FileManager.default.fileExists(atPath: path) {
                try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: path)
            }
        }
        let cache = try open()
        cache.state.withLock { $0.isDirty = true }
        cache.close()
        let snapshot = try #require(IndexSnapshot(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: folder.appending("index"))))))
        #expect(
            (0..<256).allSatisfy { shard in
                let path = folder.path + "/" + EntryHash.shardName(shard)
                return snapshot.trusts(folder: shard, modifiedAt: try? POSIXFile.modificationTime(path), margin: snapshot.trustMarginNanoseconds)
            })
    }

    @Test("verify reads every entry, removes the damaged and misplaced ones, forgets missing files, keeps the sound")
    func verify() throws {
        // Given six entries: two sound, one flipped, one truncated, one copied over another's name, one deleted
        let cache = try open()
        for index in 0..<6 {
            try cache.storeData(testData(count: 5_000, seed: UInt64(index)), metadata: Data(), forKey: "entry\(index)")
        }
        try rewrite(entryPath("entry2")) { $0[$0.count - 10] ^= 0xFF }
        try rewrite(entryPath("entry3")) { $0.removeLast(100) }
        try FileManager.default.removeItem(atPath: entryPath("entry4"))
        try FileManager.default.copyItem(atPath: entryPath("entry0"), toPath: entryPath("entry4"))
        try FileManager.default.removeItem(atPath: entryPath("entry5"))

        // When the cache is verified
        let report = cache.verify()

        // Then the damage is removed and reported, the sound entries stay
        #expect(report.sound == 2)
        #expect(report.removed == 3)
        #expect(report.missing == 1)
        #expect(report.problems.count == 3)
        #expect(report.problems.contains { $0.contains("checksum") })
        #expect(report.problems.contains { $0.contains("another key") })
        #expect(cache.count == 2)
        #expect(cache.cachedData(forKey: "entry1")?.data == testData(count: 5_000, seed: 1))
        expectConsistent(cache)
        #expect(cache.verify() == DiskCache.VerificationReport(sound: 2))
    }
}
