import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("DiskCache")
struct DiskCacheTests {
    let folder = TemporaryDirectory()
    let clock = ManualClock()

    func open(sizeLimit: Int = 1 << 30, maxAge: Duration? = .seconds(7 * 24 * 3600)) throws -> DiskCache {
        let clock = clock
        return try DiskCache(
            path: folder.path,
            configuration: .init(
                sizeLimit: sizeLimit, maxAge: maxAge, maintenanceInterval: nil, currentDate: { clock.date }
            ))
    }

    @Test("stores and loads data with its metadata; replaces and removes")
    func roundTrip() throws {
        let cache = try open()
        let body = testData(count: 20_000, seed: 1)
        try cache.storeData(body, metadata: Data("etag: 1".utf8), forKey: "https://example.com/a.jpg")
        let hit = try #require(cache.cachedData(forKey: "https://example.com/a.jpg"))
        #expect(hit.data == body)
        #expect(hit.metadata == Data("etag: 1".utf8))
        #expect(cache.containsData(forKey: "https://example.com/a.jpg"))
        #expect(cache.cachedData(forKey: "https://example.com/b.jpg") == nil)

        try cache.storeData(Data("new".utf8), metadata: Data(), forKey: "https://example.com/a.jpg")
        #expect(cache.cachedData(forKey: "https://example.com/a.jpg")?.data == Data("new".utf8))
        #expect(cache.count == 1)
        expectConsistent(cache)

        try cache.removeData(forKey: "https://example.com/a.jpg")
        #expect(cache.cachedData(forKey: "https://example.com/a.jpg") == nil)
        #expect(cache.count == 0 && cache.totalSize == 0)
        expectConsistent(cache)
    }

    @Test("mayContainData answers from the index and never waits: \"maybe\" while the index is busy", .timeLimit(.minutes(10)))
    func mayContainData() throws {
        let cache = try open()
        try cache.storeData(Data("x".utf8), forKey: "stored")
        #expect(cache.mayContainData(forKey: "stored"))
        #expect(!cache.mayContainData(forKey: "absent"))
        // While another operation holds the index (here, this thread), the answer is "maybe" at once.
        cache.state.withLock { _ in #expect(cache.mayContainData(forKey: "absent")) }
        cache.close()
        #expect(!cache.mayContainData(forKey: "stored"), "a closed cache holds nothing")
    }

    @Test("empty data, empty keys, large metadata and keys that differ only slightly")
    func edgeCases() throws {
        let cache = try open()
        try cache.storeData(Data(), metadata: Data(), forKey: "")
        #expect(cache.cachedData(forKey: "") == CachedData(data: Data()))
        let metadata = testData(count: 10_000, seed: 2)  // larger than the first read
        try cache.storeData(Data("x".utf8), metadata: metadata, forKey: "k")
        #expect(cache.cachedData(forKey: "k") == CachedData(data: Data("x".utf8), metadata: metadata))
        // Same file name in different folders (a seed's bug): full keys, no collisions.
        try cache.storeData(Data("1".utf8), metadata: Data(), forKey: "a/photo.jpg")
        try cache.storeData(Data("2".utf8), metadata: Data(), forKey: "b/photo.jpg")
        #expect(cache.cachedData(forKey: "a/photo.jpg")?.data == Data("1".utf8))
        #expect(cache.cachedData(forKey: "b/photo.jpg")?.data == Data("2".utf8))
        expectConsistent(cache)
    }

    @Test("the size limit holds after every store, evicting least recently used entries")
    func sizeLimit() throws {
        let entry = EntryFile.fileSize(keyCount: 2, metadataCount: 0, bodyCount: 1000)
        let cache = try open(sizeLimit: entry * 5)
        for i in 0..<5 { try cache.storeData(testData(count: 1000, seed: UInt64(i)), metadata: Data(), forKey: "k\(i)") }
        _ = cache.cachedData(forKey: "k0")  // k0 is now the most recently used
        for i in 5..<8 {
            try cache.storeData(testData(count: 1000, seed: UInt64(i)), metadata: Data(), forKey: "k\(i)")
            #expect(cache.totalSize <= entry * 5)
        }
        // k1, k2, k3 were the least recently used
        #expect(cache.cachedData(forKey: "k0") != nil)
        for i in 1...3 { #expect(cache.cachedData(forKey: "k\(i)") == nil) }
        for i in 4..<8 { #expect(cache.cachedData(forKey: "k\(i)") != nil) }
        expectConsistent(cache)
    }

    @Test(
        "second-store admission: a key's first store writes nothing, its second does; an entry is always replaced; keys are remembered for half the window"
    )
    func secondStoreAdmission() throws {
        let cache = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil, admission: .secondStore(window: 4)))
        try cache.storeData(Data("one".utf8), metadata: Data(), forKey: "a")
        #expect(cache.cachedData(forKey: "a") == nil && cache.count == 0 && cache.totalSize == 0)
        try cache.storeData(Data("two".utf8), metadata: Data(), forKey: "a")
        #expect(cache.cachedData(forKey: "a")?.data == Data("two".utf8))
        try cache.storeData(Data("three".utf8), metadata: Data(), forKey: "a")
        #expect(cache.cachedData(forKey: "a")?.data == Data("three".utf8))
        expectConsistent(cache)

        // Window 4: two generations of two keys. b is still remembered after
        // two other new keys (c, d); c is not after three (e, f, g).
        for key in ["b", "c", "d"] { try cache.storeData(Data(key.utf8), metadata: Data(), forKey: key) }
        #expect(cache.count == 1)
        try cache.storeData(Data("b".utf8), metadata: Data(), forKey: "b")
        #expect(cache.cachedData(forKey: "b") != nil)
        for key in ["e", "f", "g"] { try cache.storeData(Data(key.utf8), metadata: Data(), forKey: key) }
        try cache.storeData(Data("c".utf8), metadata: Data(), forKey: "c")
        #expect(cache.cachedData(forKey: "c") == nil, "c was forgotten")
        try cache.storeData(Data("c".utf8), metadata: Data(), forKey: "c")
        #expect(cache.cachedData(forKey: "c") != nil)
        #expect(cache.count == 3)
        expectConsistent(cache)

        // A closed cache still refuses, admitted or not.
        cache.close()
        #expect(throws: DiskCacheError.self) { try cache.storeData(Data(), metadata: Data(), forKey: "h") }
    }

    @Test(
        "admitsData answers without I/O what a store would do: false (and remembered) for a first sighting, true for the second and for a stored key"
    )
    func admitsDataAsked() throws {
        let cache = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil, admission: .secondStore(window: 8)))
        #expect(!cache.admitsData(forKey: "a"))
        #expect(cache.admitsData(forKey: "a"), "asked once, the key is remembered")
        try cache.storeData(Data("a".utf8), metadata: Data(), forKey: "a")
        #expect(cache.cachedData(forKey: "a") != nil, "the store after an admitting answer writes")
        #expect(cache.admitsData(forKey: "a"))
        let always = try DiskCache(path: folder.appending("always"), configuration: .init(maintenanceInterval: nil))
        #expect(always.admitsData(forKey: "b"))
        cache.close()
        #expect(!cache.admitsData(forKey: "c"), "a closed cache admits nothing")
    }

    @Test("an entry larger than the whole limit is refused with a typed error")
    func entryTooLarge() throws {
        let cache = try open(sizeLimit: 1000)
        #expect {
            try cache.storeData(Data(count: 2000), metadata: Data(), forKey: "big")
        } throws: { error in
            guard let error = error as? DiskCacheError, case .entryTooLarge = error.code else { return false }
            return error.key == "big" && "\(error)".contains("big")
        }
        #expect(cache.count == 0)
        expectConsistent(cache)
    }

    @Test("entries unused for longer than the max age expire; reading one keeps it")
    func expiry() throws {
        let cache = try open(maxAge: .seconds(3600))
        try cache.storeData(Data("a".utf8), metadata: Data(), forKey: "a")
        try cache.storeData(Data("b".utf8), metadata: Data(), forKey: "b")
        clock.advance(by: .seconds(3000))
        _ = cache.cachedData(forKey: "a")
        clock.advance(by: .seconds(1000))
        try cache.removeExpired()
        #expect(cache.containsData(forKey: "a"))
        #expect(!cache.containsData(forKey: "b"))
        clock.advance(by: .seconds(3601))
        try cache.removeExpired()
        #expect(cache.count == 0)
        expectConsistent(cache)
    }

    @Test("trim and removeAll")
    func trimAndRemoveAll() throws {
        let cache = try open()
        for i in 0..<100 { try cache.storeData(testData(count: 500, seed: UInt64(i)), metadata: Data(), forKey: "k\(i)") }
        let half = cache.totalSize / 2
        try cache.trim(toSize: half)
        #expect(cache.totalSize <= half)
        #expect(cache.containsData(forKey: "k99") && !cache.containsData(forKey: "k0"))
        expectConsistent(cache)
        try cache.removeAll()
        #expect(cache.count == 0 && cache.totalSize == 0)
        expectConsistent(cache)
        try cache.storeData(Data("again".utf8), metadata: Data(), forKey: "k")
        #expect(cache.cachedData(forKey: "k")?.data == Data("again".utf8))
    }

    @Test("reopening restores entries, sizes and LRU order from the snapshot")
    func reopenFromSnapshot() throws {
        do {
            let cache = try open()
            for i in 0..<50 { try cache.storeData(testData(count: 300, seed: UInt64(i)), metadata: Data(), forKey: "k\(i)") }
            _ = cache.cachedData(forKey: "k0")
            cache.close()
        }
        let reopened = try open(sizeLimit: 1 << 30)
        #expect(reopened.count == 50)
        #expect(reopened.cachedData(forKey: "k7")?.data == testData(count: 300, seed: 7))
        expectConsistent(reopened)
        // LRU order survived: k0 was read last, so trimming keeps it.
        let oldestFirst = reopened.state.withLock { $0.index.oldestFirst }
        #expect(oldestFirst.last?.hash == EntryHash(key: "k7"))
        #expect(oldestFirst.dropLast().last?.hash == EntryHash(key: "k0"))
    }

    @Test("reopening without a snapshot lists the folders")
    func reopenWithoutSnapshot() throws {
        do {
            let cache = try open()
            for i in 0..<50 { try cache.storeData(testData(count: 300, seed: UInt64(i)), metadata: Data(), forKey: "k\(i)") }
            cache.close()
        }
        try FileManager.default.removeItem(atPath: folder.appending("index"))
        let reopened = try open()
        #expect(reopened.count == 50)
        #expect(reopened.cachedData(forKey: "k9")?.data == testData(count: 300, seed: 9))
        expectConsistent(reopened)
    }

    @Test("opening with a smaller limit trims at once")
    func reopenSmaller() throws {
        do {
            let cache = try open()
            for i in 0..<20 { try cache.storeData(Data(count: 1000), metadata: Data(), forKey: "k\(i)") }
            cache.close()
        }
        let reopened = try open(sizeLimit: 5000)
        #expect(reopened.totalSize <= 5000)
        expectConsistent(reopened)
    }

    @Test("a second cache on the same folder gets a clear 'in use' error until the first closes")
    func exclusiveFolder() throws {
        let first = try open()
        #expect {
            _ = try open()
        } throws: { error in
            (error as? DiskCacheError)?.code == .inUse && "\(error)".contains("in use")
        }
        first.close()
        _ = try open()
    }

    @Test("a closed cache misses on reads and refuses writes")
    func closed() throws {
        let cache = try open()
        try cache.storeData(Data("a".utf8), metadata: Data(), forKey: "a")
        cache.close()
        #expect(cache.cachedData(forKey: "a") == nil)
        #expect(throws: DiskCacheError.self) { try cache.storeData(Data(), metadata: Data(), forKey: "b") }
        cache.close()  // twice is fine
    }
}
