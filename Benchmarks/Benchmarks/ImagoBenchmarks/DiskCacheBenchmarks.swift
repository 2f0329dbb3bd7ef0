import Benchmark
import Foundation
import Imago
import ImagoSandbox

/// Stores and loads of 20 KB entries. One iteration is one operation, so the
/// printed percentiles (p50 = median) are per operation. Keys, bodies and the
/// random load order are made in `setup`, outside every measurement.
func diskCacheBenchmarks() {
    let perOperation = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 100,
        maxDuration: .seconds(10),
        maxIterations: 20_000
    )
    let bodySize = 20 * 1024

    // Every store is under a new key, into a cache far below its size limit:
    // no replacement and no eviction, only the write path.
    let storeFolder = ScratchCache("store")
    Benchmark("DiskCache store 20 KB", configuration: perOperation) { (benchmark: Benchmark, state: StoreState) in
        let i = state.next
        state.next += 1
        do {
            try state.cache.storeData(state.bodies[i % state.bodies.count], metadata: Data(), forKey: state.keys[i % state.keys.count])
        } catch {
            benchmark.error("store \(i) failed: \(error)")
        }
    } setup: {
        let keyCount = perOperation.warmupIterations + perOperation.maxIterations
        return StoreState(
            cache: try storeFolder.open(),
            keys: DiskWorkload.keys(0..<keyCount),
            bodies: DiskWorkload.bodies(count: 64, size: bodySize, seed: 1)
        )
    } teardown: {
        storeFolder.remove()
    }

    // Reads of 10,000 stored entries in a uniformly random (pre-drawn) order:
    // every read hits.
    let loadFolder = ScratchCache("load")
    Benchmark("DiskCache load 20 KB random", configuration: perOperation) { (benchmark: Benchmark, state: LoadState) in
        let i = state.next
        state.next += 1
        let entry = state.cache.cachedData(forKey: state.keys[state.order[i % state.order.count]])
        if entry == nil { benchmark.error("load \(i) missed") }
        blackHole(entry)
    } setup: {
        let entryCount = 10_000
        let cache = try loadFolder.open()
        try DiskWorkload.fill(cache, entries: 0..<entryCount, bodies: DiskWorkload.bodies(count: 64, size: bodySize, seed: 2))
        var generator = SeededGenerator(seed: 3)
        return LoadState(
            cache: cache,
            keys: DiskWorkload.keys(0..<entryCount),
            order: (0..<(perOperation.warmupIterations + perOperation.maxIterations)).map { _ in
                Int.random(in: 0..<entryCount, using: &generator)
            }
        )
    } teardown: {
        loadFolder.remove()
    }
}

/// The store benchmark's cache, keys and bodies, and the next key to use.
final class StoreState {
    let cache: DiskCache
    let keys: [String]
    let bodies: [Data]
    var next = 0

    init(cache: DiskCache, keys: [String], bodies: [Data]) {
        self.cache = cache
        self.keys = keys
        self.bodies = bodies
    }
}

/// The load benchmark's filled cache, its keys, and the order to read them in.
final class LoadState {
    let cache: DiskCache
    let keys: [String]
    /// Indices into `keys`, drawn uniformly.
    let order: [Int]
    var next = 0

    init(cache: DiskCache, keys: [String], order: [Int]) {
        self.cache = cache
        self.keys = keys
        self.order = order
    }
}
