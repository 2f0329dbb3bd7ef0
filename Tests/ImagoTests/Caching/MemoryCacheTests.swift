import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("MemoryCache")
struct MemoryCacheTests {
    private func makeCache(
        count: Int = .max, cost: Int = .max, fraction: Double = 1, policy: EvictionPolicy = .s3fifo,
        timeToLive: Duration? = nil, clock: ManualClock = ManualClock()
    ) -> MemoryCache<String, Int> {
        MemoryCache(
            configuration: .init(
                countLimit: count, costLimit: cost, entryCostLimitFraction: fraction,
                timeToLive: timeToLive, evictionPolicy: policy, shardCount: 1
            ),
            clock: clock
        )
    }

    @Test("stores, reads, replaces and removes values")
    func basics() {
        let cache = makeCache()
        cache.set(1, forKey: "a", cost: 10)
        #expect(cache.value(forKey: "a") == 1)
        cache.set(2, forKey: "a", cost: 30)
        #expect(cache["a"] == 2)
        #expect(cache.totalCost == 30)
        #expect(cache.totalCount == 1)
        #expect(cache.removeValue(forKey: "a") == 2)
        #expect(cache["a"] == nil)
        #expect(cache.totalCost == 0)
        cache["b"] = 3
        cache["b"] = nil
        #expect(cache.totalCount == 0)
        #expect(cache.checkInvariants().isEmpty)
    }

    @Test("LRU evicts the least recently used entry")
    func lruOrder() {
        // Given a full LRU cache where "a" was read after "b" and "c" were stored
        let cache = makeCache(count: 3, policy: .lru)
        cache["a"] = 1
        cache["b"] = 2
        cache["c"] = 3
        _ = cache["a"]
        // When a fourth entry arrives
        cache["d"] = 4
        // Then "b", the least recently used, is gone
        #expect(cache["b"] == nil)
        #expect(cache["a"] == 1 && cache["c"] == 3 && cache["d"] == 4)
    }

    @Test("S3-FIFO keeps entries that were read while a scan of one-time keys passes through")
    func s3fifoResistsScans() {
        // Given a cache of 10 whose entries 0...4 are read twice (promoted to the main queue)
        let cache = makeCache(count: 10)
        for key in 0..<5 { cache["hot\(key)"] = key }
        for key in 0..<5 { _ = cache["hot\(key)"] }
        for key in 0..<5 { cache["filler\(key)"] = key }
        // When 100 keys are each stored once and never read
        for key in 0..<100 { cache["scan\(key)"] = key }
        // Then the hot entries survived; LRU would have lost them all
        for key in 0..<5 { #expect(cache["hot\(key)"] == key) }
        #expect(cache.totalCount == 10)
        #expect(cache.checkInvariants().isEmpty)
    }

    @Test("S3-FIFO evicts new, unread entries first, oldest first")
    func s3fifoEvictsProbationFirst() {
        let cache = makeCache(count: 10)
        for key in 0..<10 { cache["k\(key)"] = key }
        _ = cache["k0"]
        cache["new"] = 99
        // k0 was read, so k1 (the oldest unread) goes.
        #expect(cache["k0"] == 0)
        #expect(cache["k1"] == nil)
        #expect(cache["new"] == 99)
    }

    @Test("a key evicted recently goes straight to the main queue when it comes back")
    func ghostQueue() {
        let cache = makeCache(count: 10)
        for key in 0..<10 { cache["k\(key)"] = key }
        cache["k10"] = 10  // evicts k0 into the ghost queue
        #expect(cache["k0"] == nil)
        cache["k0"] = 0  // remembered: into the main queue
        // A scan of new keys now evicts from probation, not k0.
        for key in 11..<30 { cache["k\(key)"] = key }
        #expect(cache["k0"] == 0)
    }

    @Test("the cost limit evicts until the total fits")
    func costLimit() {
        let cache = makeCache(cost: 100)
        for key in 0..<10 { cache.set(key, forKey: "k\(key)", cost: 30) }
        #expect(cache.totalCost <= 100)
        #expect(cache.totalCount == 3)
        #expect(cache.checkInvariants().isEmpty)
    }

    @Test("an entry costlier than the entry cost limit is not stored and drops an older value")
    func entryCostLimit() {
        let cache = makeCache(cost: 1000, fraction: 0.1)
        cache.set(1, forKey: "big", cost: 50)
        #expect(cache["big"] == 1)
        cache.set(2, forKey: "big", cost: 101)
        #expect(cache["big"] == nil)
        #expect(cache.totalCost == 0)
        cache.set(3, forKey: "ok", cost: 100)
        #expect(cache["ok"] == 3)
    }

    @Test("entries expire after their time to live, measured on the injected clock")
    func timeToLive() {
        let clock = ManualClock()
        let cache = makeCache(timeToLive: .seconds(60), clock: clock)
        cache["a"] = 1
        clock.advance(by: .seconds(30))
        cache["b"] = 2
        #expect(cache["a"] == 1)
        clock.advance(by: .seconds(30))
        #expect(cache["a"] == nil)
        #expect(cache["b"] == 2)
        clock.advance(by: .seconds(31))
        cache.removeExpired()
        #expect(cache.totalCount == 0)
    }

    @Test("trim reduces the total cost and count across shards")
    func trim() {
        let cache = MemoryCache<Int, Int>(configuration: .init(countLimit: 10_000, costLimit: .max, shardCount: 8))
        for key in 0..<1000 { cache.set(key, forKey: key, cost: 10) }
        #expect(cache.totalCost == 10_000)
        cache.trim(toCost: 4000)
        #expect(cache.totalCost <= 4000)
        #expect(cache.totalCost > 3000)
        cache.trim(toCount: 100)
        #expect(cache.totalCount <= 100)
        cache.removeAll()
        #expect(cache.totalCount == 0 && cache.totalCost == 0)
        #expect(cache.checkInvariants().isEmpty)
    }

    @Test("the default shard count keeps every shard able to hold a maximal entry")
    func shardCount() {
        #expect(MemoryCache<Int, Int>.Configuration(countLimit: 20).resolvedShardCount == 1)
        #expect(MemoryCache<Int, Int>.Configuration(countLimit: 1000).resolvedShardCount == 8)
        #expect(MemoryCache<Int, Int>.Configuration(entryCostLimitFraction: 0.25).resolvedShardCount == 4)
        #expect(MemoryCache<Int, Int>.Configuration(shardCount: 6).resolvedShardCount == 4)
    }

    @Test(
        "random operation sequences keep the invariants and agree with a dictionary",
        arguments: [EvictionPolicy.s3fifo, .lru], [UInt64(2024), 7, 99, 31_337]
    )
    func randomOperations(policy: EvictionPolicy, seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let cache = MemoryCache<Int, Int>(
            configuration: .init(
                countLimit: 50, costLimit: 2000, entryCostLimitFraction: 0.2, evictionPolicy: policy, shardCount: 2))
        var latest: [Int: Int] = [:]  // the last value set for each key
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<200, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                if let value = cache.value(forKey: key) { #expect(latest[key] == value, "stale value at step \(step)") }
            case 5..<9:
                let cost = Int.random(in: 0...450, using: &generator)
                cache.set(step, forKey: key, cost: cost)
                latest[key] = step
                #expect(cache.value(forKey: key) == (cost <= 400 ? step : nil))
            default:
                cache.removeValue(forKey: key)
                #expect(cache.value(forKey: key) == nil)
            }
            if step % 1000 == 0 { #expect(cache.checkInvariants().isEmpty) }
        }
        #expect(cache.checkInvariants().isEmpty)
        #expect(cache.totalCount <= 50 && cache.totalCost <= 2000)
    }

    @Test("many tasks reading, writing and removing at once leave a sound cache")
    func concurrentAccess() async {
        let cache = MemoryCache<Int, [Int]>(configuration: .init(countLimit: 300, costLimit: 30_000))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(worker))
                    for step in 0..<20_000 {
                        let key = Int.random(in: 0..<1000, using: &generator)
                        switch step % 5 {
                        case 0, 1: cache.set([key, step], forKey: key, cost: 100)
                        case 2: cache.removeValue(forKey: key)
                        default:
                            if let value = cache.value(forKey: key) { #expect(value[0] == key) }
                        }
                    }
                }
            }
        }
        #expect(cache.checkInvariants().isEmpty)
        #expect(cache.totalCount <= 300 && cache.totalCost <= 30_000)
    }
}
