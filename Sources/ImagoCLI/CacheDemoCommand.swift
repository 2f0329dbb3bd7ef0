import ArgumentParser
import Foundation
import Imago
import ImagoSandbox

/// `imago cache demo`: stores a generated set of images' worth of data in a fresh
/// disk cache, reads it back from disk after reopening, then from memory, and
/// shows what each pass cost; then damages a file and shows it detected.
struct CacheDemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Exercise a disk cache alone: store, reopen, read back, detect a damaged file."
    )

    @Option(help: "How many entries to store.")
    var count = 2_000

    @Option(help: "The disk cache's size limit in MiB (smaller than the data shows eviction).")
    var sizeLimit = 64

    @Option(help: "Cache folder (default: a fresh temporary folder, removed afterwards).")
    var cache: String?

    mutating func run() throws {
        guard count > 0, sizeLimit > 0 else { throw ValidationError("--count and --size-limit must be positive") }
        let folder = cache ?? NSTemporaryDirectory() + "imago-demo-\(UUID().uuidString)"
        defer { if cache == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let configuration = DiskCache.Configuration(sizeLimit: sizeLimit << 20, maintenanceInterval: nil)
        let keys = (0..<count).map { "https://images.example/gallery/\($0).jpg" }
        // Sizes like a thumbnail gallery: mostly 5-60 KB, a few large ones.
        var generator = SeededGenerator(seed: 2026)
        let payloads = keys.indices.map { i in
            let size = i % 50 == 0 ? 400_000 : Int.random(in: 5_000...60_000, using: &generator)
            return Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
        }
        print("Imago cache demo: \(count) entries, \(payloads.reduce(0) { $0 + $1.count } / 1024) KiB, disk limit \(sizeLimit) MiB")
        print("cache folder: \(folder)\n")

        var rows: [PassReport] = []
        var store = PassReport(name: "store (cold)")
        let disk = try DiskCache(path: folder, configuration: configuration)
        for (key, payload) in zip(keys, payloads) {
            try store.time { try disk.storeData(payload, metadata: Data(), forKey: key) }
            store.bytes += payload.count
        }
        store.entries = keys.count
        disk.close()
        rows.append(store)

        let openStart = ContinuousClock.now
        let reopened = try DiskCache(path: folder, configuration: configuration)
        let openTime = ContinuousClock.now - openStart
        let memory = MemoryCache<String, Data>(configuration: .init(costLimit: 256 << 20))
        var fromDisk = PassReport(name: "disk (reopened)")
        for (key, payload) in zip(keys, payloads) {
            let hit = fromDisk.time { reopened.cachedData(forKey: key) }
            fromDisk.entries += 1
            guard let hit else {
                fromDisk.misses += 1
                continue
            }
            guard hit.data == payload else { throw DemoFailure("\(key): the disk returned different bytes") }
            fromDisk.bytes += hit.data.count
            fromDisk.hits += 1
            memory.set(hit.data, forKey: key, cost: hit.data.count)
        }
        rows.append(fromDisk)

        var fromMemory = PassReport(name: "memory")
        for key in keys {
            let hit = fromMemory.time { memory.value(forKey: key) }
            fromMemory.entries += 1
            if let hit {
                fromMemory.hits += 1
                fromMemory.bytes += hit.count
            } else {
                fromMemory.misses += 1
            }
        }
        rows.append(fromMemory)

        PassReport.printTable(rows)
        print(
            """

            disk: \(reopened.count) entries, \(reopened.totalSize / 1024) KiB on disk (limit \(sizeLimit << 10) KiB), \
            reopened in \(openTime.formatted(.units(allowed: [.milliseconds], fractionalPart: .show(length: 1))))
            memory: \(memory.totalCount) entries, \(memory.totalCost / 1024) KiB
            """)
        try demonstrateCorruption(reopened, key: keys[keys.count - 1], folder: folder)
        reopened.close()
    }

    /// Flips one byte of an entry's file behind the cache's back.
    private func demonstrateCorruption(_ cache: DiskCache, key: String, folder: String) throws {
        guard let path = Self.entryFile(in: folder, containing: key) else { return }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
        let result = cache.cachedData(forKey: key)
        print("corruption: flipped one byte of \(key)'s file -> \(result == nil ? "detected, removed, reported as a miss" : "NOT DETECTED")")
        if result != nil { throw DemoFailure("a corrupt entry was served") }
    }

    /// The most recently written entry file whose header names `key`.
    private static func entryFile(in folder: String, containing key: String) -> String? {
        let manager = FileManager.default
        let files = (try? manager.subpathsOfDirectory(atPath: folder)) ?? []
        return files.lazy.map { folder + "/" + $0 }.first { path in
            guard path.split(separator: "/").last?.count == 64, let data = manager.contents(atPath: path) else { return false }
            return data.range(of: Data(key.utf8)) != nil
        }
    }
}

struct DemoFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
