import Benchmark
import Foundation
import Imago

/// Opening, closing and trimming a cache of 100,000 small (200-byte) entries.
/// One iteration is one open (or close, or trim); the folders are filled in
/// `setup`, outside every measurement.
func diskCacheMaintenanceBenchmarks() {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(20),
        maxIterations: 50
    )
    let entryCount = 100_000
    // Any entry will do; this one is in the middle of the LRU order.
    let probeKey = DiskWorkload.key(entryCount / 2)

    /// Opens the cache, reads one entry and the total size: what an app does
    /// at launch. Closing is measured apart ("close 100k" below).
    func openAndProbe(_ path: String, _ benchmark: Benchmark) -> DiskCache? {
        do {
            let cache = try DiskCache(path: path, configuration: .benchmark)
            if cache.cachedData(forKey: probeKey) == nil { benchmark.error("the probe entry is missing") }
            blackHole(cache.totalSize)
            return cache
        } catch {
            benchmark.error("open failed: \(error)")
            return nil
        }
    }

    let openFolder = ScratchCache("open")
    Benchmark("DiskCache open 100k", configuration: configuration) { benchmark, path in
        let cache = openAndProbe(path, benchmark)
        benchmark.stopMeasurement()
        // Writes the snapshot again (the probe moved an entry in the LRU order).
        cache?.close()
    } setup: {
        try await makeClosedCache(openFolder, entryCount: entryCount)
    } teardown: {
        openFolder.remove()
    }

    // Without the index snapshot, opening lists all 256 sub-folders.
    let scanFolder = ScratchCache("scan")
    Benchmark("DiskCache open 100k without index (full scan)", configuration: configuration) { benchmark, path in
        unlink(path + "/index")
        benchmark.startMeasurement()
        let cache = openAndProbe(path, benchmark)
        benchmark.stopMeasurement()
        cache?.close()
    } setup: {
        try await makeClosedCache(scanFolder, entryCount: entryCount)
    } teardown: {
        scanFolder.remove()
    }

    // close() after one read: saves the 100,000-entry snapshot and unlocks.
    let closeFolder = ScratchCache("close")
    Benchmark("DiskCache close 100k (snapshot write)", configuration: configuration) { benchmark, path in
        let cache = openAndProbe(path, benchmark)
        benchmark.startMeasurement()
        cache?.close()
    } setup: {
        try await makeClosedCache(closeFolder, entryCount: entryCount)
    } teardown: {
        closeFolder.remove()
    }

    // Each iteration first stores new entries (unmeasured) to bring the cache
    // back to 100,000, then trims it to half its size.
    let trimFolder = ScratchCache("trim")
    Benchmark(
        "DiskCache trim 100k to half",
        configuration: .init(
            metrics: configuration.metrics,
            timeUnits: .milliseconds,
            warmupIterations: 0,
            maxDuration: .seconds(60),
            maxIterations: 10
        )
    ) { (benchmark: Benchmark, state: TrimState) in
        do {
            while state.cache.count < entryCount {
                try state.cache.storeData(state.bodies[state.next % state.bodies.count], metadata: Data(), forKey: DiskWorkload.key(state.next))
                state.next += 1
            }
            let target = state.cache.totalSize / 2
            benchmark.startMeasurement()
            try state.cache.trim(toSize: target)
            benchmark.stopMeasurement()
        } catch {
            benchmark.error("trim failed: \(error)")
        }
    } setup: {
        let cache = try trimFolder.open()
        let bodies = DiskWorkload.bodies(count: 16, size: 200, seed: 5)
        try DiskWorkload.fill(cache, entries: 0..<entryCount, bodies: bodies)
        return TrimState(cache: cache, bodies: bodies, next: entryCount)
    } teardown: {
        trimFolder.remove()
    }
}

/// Fills a new cache in `folder` with `entryCount` entries of 200 bytes and
/// closes it, which saves the index snapshot; returns the folder's path.
///
/// The snapshot vouches only for sub-folders last modified some time before
/// it was written (100 ms where file times have sub-second digits, as on
/// /dev/shm; 2 s where they are whole seconds), so the cache waits longer
/// than that before closing: this measures the open of an idle cache. Right
/// after a burst of writes, the folders written in the last 100 ms are listed
/// again; the full-scan benchmark bounds that cost.
private func makeClosedCache(_ folder: ScratchCache, entryCount: Int) async throws -> String {
    let cache = try folder.open()
    try DiskWorkload.fill(cache, entries: 0..<entryCount, bodies: DiskWorkload.bodies(count: 16, size: 200, seed: 4))
    try await Task.sleep(for: .milliseconds(2_500))
    folder.close()
    return folder.path
}

/// The trim benchmark's cache, its bodies, and the next new key.
final class TrimState {
    let cache: DiskCache
    let bodies: [Data]
    var next: Int

    init(cache: DiskCache, bodies: [Data], next: Int) {
        self.cache = cache
        self.bodies = bodies
        self.next = next
    }
}
