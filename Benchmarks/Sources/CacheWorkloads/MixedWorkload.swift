import Imago
import ImagoSandbox

/// The memory-cache workload: one million operations on 10,000 `Int` keys
/// drawn Zipf(1.0), each a get (80%) or a set (20%), with the gets and sets
/// drawn up front so that every run, and every policy, replays the same trace.
///
/// ```swift
/// let workload = MixedWorkload()
/// let cache = MixedWorkload.makeCache(policy: .s3fifo)
/// let hits = workload.run(on: cache, operations: workload.keys.indices)
/// ```
public struct MixedWorkload: Sendable {
    /// The number of distinct keys (ranks of the Zipf distribution).
    public static let keyCount = 10_000
    /// The number of operations in the trace.
    public static let operationCount = 1_000_000
    /// The cache's count limit: 10% of the keys.
    public static let countLimit = 1_000
    /// The cost of every entry. With a 1 GiB cost limit the count limit governs.
    public static let entryCost = 65_536

    /// The key of each operation.
    public let keys: [Int]
    /// Whether each operation is a set (otherwise a get).
    public let isSet: [Bool]
    /// One value per key, allocated once, so that no operation allocates a value.
    public let payloads: [Payload]

    /// A trace of `length` operations; the keys come from seed `seed` (as
    /// `ZipfDistribution(count: 10_000).trace(length:seed:)`), the get/set
    /// choices from the next seed.
    public init(length: Int = operationCount, setFraction: Double = 0.2, seed: UInt64 = 1) {
        keys = ZipfDistribution(count: Self.keyCount).trace(length: length, seed: seed)
        var generator = SeededGenerator(seed: seed &+ 1)
        isSet = (0..<length).map { _ in Double.random(in: 0..<1, using: &generator) < setFraction }
        payloads = (0..<Self.keyCount).map { Payload(key: $0) }
    }

    /// A cache with the workload's limits: 1,000 entries, a cost limit of 1 GiB.
    public static func makeCache(policy: EvictionPolicy, shardCount: Int? = nil) -> MemoryCache<Int, Payload> {
        MemoryCache(
            configuration: .init(
                countLimit: countLimit,
                costLimit: 1 << 30,
                evictionPolicy: policy,
                shardCount: shardCount
            ))
    }

    /// Replays the operations at `operations` against `cache` and returns the
    /// number of gets that hit. Counting the hits keeps every get observable
    /// without a call per operation to an opaque sink.
    public func run(on cache: MemoryCache<Int, Payload>, operations: Range<Int>) -> Int {
        var hits = 0
        for i in operations {
            let key = keys[i]
            if isSet[i] {
                cache.set(payloads[key], forKey: key, cost: Self.entryCost)
            } else if cache.value(forKey: key) != nil {
                hits += 1
            }
        }
        return hits
    }

    /// The fraction of reads that hit when every read that misses stores the
    /// key (a read-through cache), over the whole key trace.
    public func readThroughHitRatio(of cache: MemoryCache<Int, Payload>) -> Double {
        var hits = 0
        for key in keys {
            if cache.value(forKey: key) != nil {
                hits += 1
            } else {
                cache.set(payloads[key], forKey: key, cost: Self.entryCost)
            }
        }
        return Double(hits) / Double(max(1, keys.count))
    }
}

/// A cached value: small, so that the benchmarks measure the cache, not the allocator.
public final class Payload: Sendable {
    /// The key the value belongs to.
    public let key: Int

    /// A value for `key`.
    public init(key: Int) {
        self.key = key
    }
}
