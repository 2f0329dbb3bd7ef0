import Foundation
import Imago
import ImagoSandbox

/// A disk cache folder of its own for one benchmark, under /dev/shm where
/// there is one (memory-backed, so the figures are the cache's and not the
/// device's). Nothing is created until the benchmark's setup runs; its
/// teardown calls ``remove()``.
final class ScratchCache {
    /// The cache folder.
    let path: String
    /// The cache opened by ``open()``, closed by ``remove()``.
    private var cache: DiskCache?

    /// Chooses a unique folder; `name` makes it recognisable if a run is killed.
    init(_ name: String) {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        path = "\(base)/imago-bench-\(name)-\(getpid())-\(UUID().uuidString)"
    }

    /// Opens (creating it) the cache in the folder; ``remove()`` closes it.
    func open() throws -> DiskCache {
        let opened = try DiskCache(path: path, configuration: .benchmark)
        cache = opened
        return opened
    }

    /// Closes the cache opened by ``open()``, if any, keeping the folder.
    func close() {
        cache?.close()
        cache = nil
    }

    /// Closes the cache opened by ``open()``, if any, and deletes the folder.
    func remove() {
        close()
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension DiskCache.Configuration {
    /// Limits that never get in the way of a benchmark: 4 GiB, so nothing is
    /// evicted unless asked; no expiry; no background maintenance.
    static var benchmark: Self {
        .init(sizeLimit: 4 << 30, maxAge: nil, maintenanceInterval: nil)
    }
}

/// Keys and bodies for the disk cache benchmarks, made before any measurement.
enum DiskWorkload {
    /// The key of entry `i`: an image URL, as the pipeline would use.
    static func key(_ i: Int) -> String {
        "https://images.example.com/photos/\(i).jpg"
    }

    /// The keys of entries `range`.
    static func keys(_ range: Range<Int>) -> [String] {
        range.map(key)
    }

    /// `count` different bodies of `size` random bytes, drawn from `seed`.
    static func bodies(count: Int, size: Int, seed: UInt64) -> [Data] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in
            var body = Data(count: size)
            body.withUnsafeMutableBytes { bytes in
                for i in bytes.indices { bytes[i] = UInt8.random(in: .min ... .max, using: &generator) }
            }
            return body
        }
    }

    /// Stores entries `range` (key `key(i)`, a body from `bodies`) in `cache`.
    static func fill(_ cache: DiskCache, entries range: Range<Int>, bodies: [Data]) throws {
        for i in range {
            try cache.storeData(bodies[i % bodies.count], metadata: Data(), forKey: key(i))
        }
    }
}
