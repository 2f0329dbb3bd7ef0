import Benchmark
import CacheWorkloads
import Dispatch
import Imago

/// One iteration replays the whole million-operation trace on a new cache, so
/// the reported wall clock divided by 1,000,000 is the time per operation.
/// The trace is drawn in `setup`, outside every measurement; each cache is
/// made before the measurement starts and freed after it stops.
func memoryCacheBenchmarks() {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 30
    )

    func singleThreaded(_ name: String, policy: EvictionPolicy, shardCount: Int?) {
        Benchmark(name, configuration: configuration) { benchmark, workload in
            let cache = MixedWorkload.makeCache(policy: policy, shardCount: shardCount)
            benchmark.startMeasurement()
            let hits = workload.run(on: cache, operations: workload.keys.indices)
            benchmark.stopMeasurement()
            blackHole(hits)
            blackHole(cache)
        } setup: {
            MixedWorkload()
        }
    }

    singleThreaded("MemoryCache S3-FIFO mixed 1 thread", policy: .s3fifo, shardCount: nil)
    singleThreaded("MemoryCache LRU mixed 1 thread", policy: .lru, shardCount: 1)
    // Separates the policy from the sharding: the default S3-FIFO cache has 8 shards.
    singleThreaded("MemoryCache S3-FIFO 1 shard mixed 1 thread", policy: .s3fifo, shardCount: 1)

    // The same million operations on one cache from two threads, each
    // replaying its own half of the trace; the wall clock covers both.
    func twoThreads(_ name: String, shardCount: Int?) {
        Benchmark(name, configuration: configuration) { benchmark, workload in
            let cache = MixedWorkload.makeCache(policy: .s3fifo, shardCount: shardCount)
            let half = workload.keys.count / 2
            let slices = [0..<half, half..<workload.keys.count]
            benchmark.startMeasurement()
            // concurrentPerform runs one slice on this thread and one on a Dispatch worker thread.
            DispatchQueue.concurrentPerform(iterations: slices.count) { slice in
                blackHole(workload.run(on: cache, operations: slices[slice]))
            }
            benchmark.stopMeasurement()
            blackHole(cache)
        } setup: {
            MixedWorkload()
        }
    }

    twoThreads("MemoryCache S3-FIFO mixed 2 threads", shardCount: nil)
    // How the shard count trades one-thread speed against two-thread scaling.
    for shards in [2, 4] {
        singleThreaded("MemoryCache S3-FIFO \(shards) shards mixed 1 thread", policy: .s3fifo, shardCount: shards)
    }
    for shards in [1, 2, 4] {
        twoThreads("MemoryCache S3-FIFO \(shards) shard\(shards == 1 ? "" : "s") mixed 2 threads", shardCount: shards)
    }
}
