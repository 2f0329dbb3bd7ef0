import Dispatch
import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("DiskCache concurrency")
struct DiskCacheConcurrencyTests {
    @Test("threads storing, loading, removing, trimming and snapshotting the same and different keys")
    func mixedOperations() throws {
        // Given a cache small enough that stores evict all the time
        let folder = TemporaryDirectory()
        let limit = 2 << 20
        let cache = try DiskCache(path: folder.path, configuration: .init(sizeLimit: limit, maintenanceInterval: nil))
        // When 8 threads hammer it (blocking I/O belongs on threads, not tasks)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var generator = SeededGenerator(seed: UInt64(worker))
            for step in 0..<400 {
                // Half the keys are shared by every thread, half are the thread's own.
                let key = Bool.random(using: &generator) ? "shared-\(Int.random(in: 0..<16, using: &generator))" : "own-\(worker)-\(step % 32)"
                switch Int.random(in: 0..<100, using: &generator) {
                case 0..<45:
                    let value = TortureValue(key: key, version: worker * 1_000_000 + step)
                    do {
                        try cache.storeData(value.body, metadata: value.metadata, forKey: key)
                    } catch {
                        Issue.record("store failed: \(error)")
                    }
                case 45..<85:
                    if let entry = cache.cachedData(forKey: key) {
                        let value = TortureValue(metadata: entry.metadata)
                        #expect(value?.key == key && value?.body == entry.data, "a read returned a mix of versions")
                    }
                case 85..<95:
                    #expect(throws: Never.self) { try cache.removeData(forKey: key) }
                case 95..<98:
                    #expect(throws: Never.self) { try cache.flush() }
                default:
                    #expect(throws: Never.self) { try cache.trim(toSize: limit / 2) }
                }
                #expect(cache.totalSize <= limit)
            }
        }
        // Then the accounting matches the disk and the index is sound
        expectConsistent(cache)
        let disk = CacheFolderInspection(path: folder.path)
        // And a reopened cache agrees
        cache.close()
        let reopened = try DiskCache(path: folder.path, configuration: .init(sizeLimit: limit, maintenanceInterval: nil))
        #expect(reopened.totalSize == disk.entryBytes && reopened.count == disk.entryFiles.count)
    }

    @Test("the periodic maintenance saves the snapshot and removes expired entries on its own")
    func periodicMaintenance() async throws {
        // Given a cache with a short maintenance interval and entries already past their max age
        let folder = TemporaryDirectory()
        let clock = ManualClock()
        let cache = try DiskCache(
            path: folder.path,
            configuration: .init(
                maxAge: .seconds(60), maintenanceInterval: .milliseconds(20), currentDate: { clock.date }
            ))
        try cache.storeData(Data("old".utf8), metadata: Data(), forKey: "old")
        clock.advance(by: .seconds(120))
        try cache.storeData(Data("new".utf8), metadata: Data(), forKey: "new")
        // When the maintenance runs (polled, with a generous bound, instead of a fixed sleep)
        for _ in 0..<500 where cache.containsData(forKey: "old") || !FileManager.default.fileExists(atPath: folder.appending("index")) {
            try await Task.sleep(for: .milliseconds(10))
        }
        // Then the expired entry is gone and a snapshot was written
        #expect(!cache.containsData(forKey: "old"))
        #expect(cache.containsData(forKey: "new"))
        #expect(FileManager.default.fileExists(atPath: folder.appending("index")))
        #expect(cache.snapshotsWritten.withLock { $0 } >= 1)
        cache.close()
    }
}
