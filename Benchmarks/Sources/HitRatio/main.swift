// Prints the hit ratios of the memory cache's eviction policies on the
// benchmark trace: 1,000,000 reads of 10,000 keys drawn Zipf(1.0), each miss
// followed by a store, with room for 1,000 entries. Run with
// `swift run -c release HitRatio` from the Benchmarks folder.
import CacheWorkloads
import Foundation

let workload = MixedWorkload()

/// The share of reads that a cache holding the 1,000 most popular keys, and
/// nothing else, would hit: an upper bound for any policy without foresight.
let topKeysShare: Double = {
    let weights = (1...MixedWorkload.keyCount).map { 1 / Double($0) }
    return weights.prefix(MixedWorkload.countLimit).reduce(0, +) / weights.reduce(0, +)
}()

let s3fifo = workload.readThroughHitRatio(of: MixedWorkload.makeCache(policy: .s3fifo))
let s3fifoOneShard = workload.readThroughHitRatio(of: MixedWorkload.makeCache(policy: .s3fifo, shardCount: 1))
let lru = workload.readThroughHitRatio(of: MixedWorkload.makeCache(policy: .lru, shardCount: 1))

func format(_ ratio: Double) -> String {
    String(format: "%.4f", ratio)
}

print("Hit ratio, read-through, \(workload.keys.count) reads, Zipf(1.0) over \(MixedWorkload.keyCount) keys, count limit \(MixedWorkload.countLimit)")
print("  S3-FIFO (default shards)   \(format(s3fifo))")
print("  S3-FIFO (1 shard)          \(format(s3fifoOneShard))")
print("  LRU (1 shard)              \(format(lru))")
print("  top-1,000 keys' share      \(format(topKeysShare))")
let margin = s3fifo - lru
print("S3-FIFO - LRU = \(format(margin)) (target >= 0.0400: \(margin >= 0.04 ? "met" : "not met"))")
