import ImagoSandbox
import Testing

@testable import Imago

@Suite("MemoryCache hit ratio")
struct MemoryCacheHitRatioTests {
    /// Replays a trace: a get, and on a miss a set (the way an image cache is used).
    static func hitRatio(_ policy: EvictionPolicy, shards: Int?, trace: [Int], capacity: Int) -> Double {
        let cache = MemoryCache<Int, Int>(
            configuration: .init(
                countLimit: capacity, evictionPolicy: policy, shardCount: shards))
        var hits = 0
        for key in trace {
            if cache.value(forKey: key) != nil { hits += 1 } else { cache.set(key, forKey: key, cost: 1) }
        }
        return Double(hits) / Double(trace.count)
    }

    @Test("S3-FIFO beats LRU by at least 4 points on Zipf(1.0) over 10,000 keys with room for 1,000")
    func s3fifoBeatsLRU() {
        // Given a skewed trace
        let trace = ZipfDistribution(count: 10_000, exponent: 1.0).trace(length: 1_000_000, seed: 42)
        // When it is replayed against both policies with the default sharding
        let lru = Self.hitRatio(.lru, shards: 1, trace: trace, capacity: 1_000)
        let s3fifo = Self.hitRatio(.s3fifo, shards: nil, trace: trace, capacity: 1_000)
        let s3fifoOneShard = Self.hitRatio(.s3fifo, shards: 1, trace: trace, capacity: 1_000)
        print("hit ratio: LRU \(lru), S3-FIFO \(s3fifo) (default shards), \(s3fifoOneShard) (one shard)")
        // Then S3-FIFO is at least 4 points better
        #expect(s3fifo >= lru + 0.04)
        #expect(s3fifoOneShard >= lru + 0.04)
    }
}
