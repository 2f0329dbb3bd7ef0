import CacheWorkloads
import Foundation
import Imago

// Prints the memory cache's time per operation next to the one-lock CLOCK
// baseline (ClockCache), one thread, the same trace in the same run:
// MixedWorkload's million operations (80% get, 20% set, Zipf(1.0) over
// 10,000 keys, count limit 1,000), replayed on a new cache per round, the
// caches interleaved round by round. Twice: with the trace's Int keys, and
// with the pipeline's own key type (ImageCacheKey of an image URL). The
// LookupFloor row is a lock around a dictionary of the 1,000 most frequent
// keys that never changes: the least an operation on any one-lock cache costs.
//
//     swift run -c release MemoryCacheSpeed [rounds]
//     PROFILE=1 perf record .build/release/MemoryCacheSpeed 50
let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 9 : 9
let workload = MixedWorkload()

/// The same trace's operations on any cache: `get` and `set` closures.
func replay<Key>(_ keys: [Key], get: (Key) -> Payload?, set: (Payload, Key) -> Void) -> (seconds: Double, hitRatio: Double) {
    var hits = 0
    var gets = 0
    let start = ContinuousClock.now
    for i in workload.keys.indices {
        let rank = workload.keys[i]
        if workload.isSet[i] {
            set(workload.payloads[rank], keys[rank])
        } else {
            gets += 1
            if get(keys[rank]) != nil { hits += 1 }
        }
    }
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    return (Double(seconds) + Double(attoseconds) * 1e-18, Double(hits) / Double(max(1, gets)))
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func compare<Key: Hashable & Sendable>(_ label: String, keys: [Key]) {
    var times: [String: [Double]] = [:]
    var ratios: [String: Double] = [:]
    let limit = MixedWorkload.countLimit
    for _ in 0..<rounds {
        let clock = ClockCache<Key, Payload>(capacity: limit)
        let clockRun = replay(keys, get: clock.value(forKey:), set: clock.set(_:forKey:))
        let sharded = MemoryCache<Key, Payload>(configuration: .init(countLimit: limit, costLimit: 1 << 30))
        let shardedRun = replay(keys, get: sharded.value(forKey:)) { sharded.set($0, forKey: $1, cost: MixedWorkload.entryCost) }
        let single = MemoryCache<Key, Payload>(configuration: .init(countLimit: limit, costLimit: 1 << 30, shardCount: 1))
        let singleRun = replay(keys, get: single.value(forKey:)) { single.set($0, forKey: $1, cost: MixedWorkload.entryCost) }
        // The trace's keys are Zipf ranks: the first `limit` are the most frequent.
        let floor = LookupFloor<Key, Payload>(keys: Array(keys.prefix(limit))) { _ in workload.payloads[0] }
        let floorRun = replay(keys, get: floor.value(forKey:), set: floor.set(_:forKey:))
        let runs = [("CLOCK baseline", clockRun), ("MemoryCache", shardedRun), ("MemoryCache 1 shard", singleRun), ("Lookup floor", floorRun)]
        for (name, run) in runs {
            times[name, default: []].append(run.seconds * 1e9 / Double(workload.keys.count))
            ratios[name] = run.hitRatio
        }
    }
    let baseline = median(times["CLOCK baseline"]!)
    print("\(label): median of \(rounds) rounds, ns per operation (share of the baseline), hit ratio of the gets")
    for name in ["CLOCK baseline", "MemoryCache", "MemoryCache 1 shard", "Lookup floor"] {
        let time = median(times[name]!)
        print(String(format: "  %-22@ %6.1f ns  %4.2fx  hits %.3f", name, time, time / baseline, ratios[name]!))
    }
}

// PROFILE=1: only the sharded MemoryCache with Int keys, round after round, for perf.
if ProcessInfo.processInfo.environment["PROFILE"] != nil {
    for _ in 0..<rounds {
        let cache = MemoryCache<Int, Payload>(configuration: .init(countLimit: MixedWorkload.countLimit, costLimit: 1 << 30))
        _ = replay(Array(0..<MixedWorkload.keyCount), get: cache.value(forKey:)) { cache.set($0, forKey: $1, cost: MixedWorkload.entryCost) }
    }
    exit(0)
}

print(
    "MemoryCacheSpeed: \(workload.keys.count) operations, one thread; load average \(try String(contentsOfFile: "/proc/loadavg", encoding: .utf8).prefix(14))"
)
compare("Int keys", keys: Array(0..<MixedWorkload.keyCount))
compare(
    "ImageCacheKey keys",
    keys: (0..<MixedWorkload.keyCount).map {
        ImageCacheKey("https://images.example.com/photos/\($0).jpg")
    })
