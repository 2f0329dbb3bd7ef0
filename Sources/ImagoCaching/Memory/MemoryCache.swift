import Foundation
import ImagoConcurrency

/// A thread-safe in-memory cache with a count limit, a cost limit and an
/// optional time to live, evicting with S3-FIFO.
///
/// Every operation is O(1) amortised. The cache is split into independently
/// locked shards (by the key's hash) so that threads touching different keys
/// rarely wait for each other; each shard enforces its share of the limits.
///
/// ```swift
/// let cache = MemoryCache<URL, Image>(configuration: .init(costLimit: 64 << 20))
/// cache.set(image, forKey: url, cost: image.byteCount)
/// if let hit = cache.value(forKey: url) { show(hit) }
/// ```
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The limits and policy of a ``MemoryCache``.
    public struct Configuration: Sendable {
        /// The maximum number of entries. Default: no limit (the cost limit governs).
        public var countLimit: Int
        /// The maximum total cost, usually bytes. Default: 20% of the
        /// process's ``MemoryBudget`` (its container's limit where one is
        /// set, else physical memory), at most 512 MiB.
        public var costLimit: Int
        /// An entry costlier than this fraction of ``costLimit`` is not stored,
        /// so one huge image cannot flush the whole cache. Default: 0.1.
        public var entryCostLimitFraction: Double
        /// How long an entry stays valid after it was stored. Default: nil (forever).
        public var timeToLive: Duration?
        /// The eviction policy. Default: ``EvictionPolicy/s3fifo``.
        public var evictionPolicy: EvictionPolicy
        /// The number of independently locked shards, rounded down to a power
        /// of two. Default: nil, which picks up to 8 while each shard can still
        /// hold an entry at the entry cost limit and at least 64 entries.
        public var shardCount: Int?

        /// A configuration with the documented defaults, overridable by argument.
        public init(
            countLimit: Int = .max,
            costLimit: Int = Configuration.defaultCostLimit,
            entryCostLimitFraction: Double = 0.1,
            timeToLive: Duration? = nil,
            evictionPolicy: EvictionPolicy = .s3fifo,
            shardCount: Int? = nil
        ) {
            self.countLimit = countLimit
            self.costLimit = costLimit
            self.entryCostLimitFraction = entryCostLimitFraction
            self.timeToLive = timeToLive
            self.evictionPolicy = evictionPolicy
            self.shardCount = shardCount
        }

        /// 20% of the process's memory budget, at most 512 MiB.
        public static var defaultCostLimit: Int {
            Int(min(MemoryBudget.current.bytes / 5, 512 << 20))
        }

        var resolvedShardCount: Int {
            let wanted: Int
            if let shardCount {
                wanted = shardCount
            } else {
                let byEntrySize = entryCostLimitFraction > 0 ? Int(1 / entryCostLimitFraction) : 8
                wanted = min(8, byEntrySize, countLimit / 64)
            }
            var power = 1
            while power * 2 <= wanted { power *= 2 }
            return power
        }
    }

    /// The configuration the cache was created with.
    public let configuration: Configuration
    // The hot path is @inlinable so that a client's MemoryCache<K, V> is
    // specialised in its own module: unspecialised generic code is several
    // times slower per operation.
    @usableFromInline let shards: [Locked<CachePolicyState<Key, Value>>]
    /// The same shards, unretained for the hot path: `shards` owns them for
    /// the cache's lifetime, and a retain and release per operation is a
    /// noticeable part of an operation this short.
    @usableFromInline let unownedShards: [Unmanaged<Locked<CachePolicyState<Key, Value>>>]
    @usableFromInline let shardShift: Int
    @usableFromInline let timeToLive: Int64?
    @usableFromInline let now: @Sendable () -> Int64

    /// Creates a cache whose time to live is measured on `ContinuousClock`.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, clock: ContinuousClock())
    }

    /// Creates a cache whose time to live is measured on `clock` (tests pass a
    /// manual clock).
    public init<C: Clock>(configuration: Configuration, clock: C) where C.Duration == Duration {
        self.configuration = configuration
        let count = configuration.resolvedShardCount
        let totalCount = max(0, configuration.countLimit)
        let totalCost = max(0, configuration.costLimit)
        let fraction = max(0, configuration.entryCostLimitFraction)
        // Double(Int.max) rounds up past Int.max: only scale by fractions below one.
        let entryCost = fraction >= 1 ? totalCost : Int(Double(totalCost) * fraction)
        shards = (0..<count).map { shard in
            let limits = CachePolicyState<Key, Value>.Limits(
                count: Self.share(of: totalCount, shard: shard, of: count),
                cost: Self.share(of: totalCost, shard: shard, of: count),
                entryCost: entryCost
            )
            return Locked(CachePolicyState(policy: configuration.evictionPolicy, limits: limits))
        }
        unownedShards = shards.map { Unmanaged.passUnretained($0) }
        shardShift = 64 - count.trailingZeroBitCount
        timeToLive = configuration.timeToLive.map { $0.nanoseconds }
        let start = clock.now
        now = { start.duration(to: clock.now).nanoseconds }
    }

    // MARK: Access

    /// The value stored for `key`, or nil if there is none or it expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let time = timeToLive == nil ? 0 : now()
        let hash = key.hashValue
        return withShard(for: hash) { $0.value(forKey: key, hash: hash, now: time) }
    }

    /// Stores `value` for `key`, evicting other entries as needed. An entry
    /// costlier than the entry cost limit is not stored (and any older value
    /// for `key` is removed).
    @inlinable
    public func set(_ value: Value, forKey key: Key, cost: Int = 0) {
        let expiry = timeToLive.map { now().addingReportingOverflow($0).partialValue } ?? .max
        let hash = key.hashValue
        withShard(for: hash) {
            _ = $0.setValue(value, forKey: key, hash: hash, cost: max(0, cost), expiry: expiry)
        }
    }

    /// Reads or writes the value for `key`; assigning nil removes it.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue { set(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Removes the value for `key` and returns it.
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        let hash = key.hashValue
        return withShard(for: hash) { $0.removeValue(forKey: key, hash: hash) }
    }

    /// Removes every entry.
    public func removeAll() {
        for shard in shards { shard.withLock { $0.removeAll() } }
    }

    /// Removes the entries whose time to live has passed. Expired entries are
    /// also dropped when read; this frees their memory sooner.
    public func removeExpired() {
        guard timeToLive != nil else { return }
        let time = now()
        for shard in shards { shard.withLock { $0.removeExpired(now: time) } }
    }

    /// Gives memory back on pressure: evicts down to half the current cost,
    /// or everything.
    public func trimMemory(_ trim: MemoryTrim) {
        switch trim {
        case .toHalf: self.trim(toCost: totalCost / 2)
        case .toEmpty: removeAll()
        }
    }

    /// Evicts entries, in policy order, until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        let total = totalCost
        guard cost < total else { return }
        for shard in shards {
            shard.withLock { $0.evict(toCount: .max, cost: Self.proportion(of: $0.totalCost, cost, total)) }
        }
    }

    /// Evicts entries, in policy order, until at most `count` remain.
    public func trim(toCount count: Int) {
        let total = totalCount
        guard count < total else { return }
        for shard in shards {
            shard.withLock { $0.evict(toCount: Self.proportion(of: $0.totalCount, count, total), cost: .max) }
        }
    }

    /// The number of entries.
    public var totalCount: Int { shards.reduce(0) { sum, shard in sum + shard.withLock { $0.totalCount } } }

    /// The sum of the entries' costs.
    public var totalCost: Int { shards.reduce(0) { sum, shard in sum + shard.withLock { $0.totalCost } } }

    /// The number of entries evicted by the limits or a trim since the cache was created.
    public var evictionCount: Int { shards.reduce(0) { sum, shard in sum + shard.withLock { $0.evictionCount } } }

    // MARK: Internals

    /// The key is hashed once per operation: the high bits of the hash pick
    /// the shard, the low ones its bucket in the shard's index.
    @inlinable
    func withShard<Result>(for hash: Int, _ body: (inout CachePolicyState<Key, Value>) -> Result) -> Result {
        let shard = unownedShards[shardShift == 64 ? 0 : Int(UInt(bitPattern: hash) >> UInt(shardShift))]
        return shard._withUnsafeGuaranteedRef { $0.withLock(body) }
    }

    /// A shard's share of a global trim target: trimming every shard to its
    /// share leaves the global total at or under the target.
    private static func proportion(of shardTotal: Int, _ target: Int, _ total: Int) -> Int {
        Int(Double(shardTotal) * Double(max(0, target)) / Double(total))
    }

    private static func share(of total: Int, shard: Int, of count: Int) -> Int {
        total == .max ? .max : total / count + (shard < total % count ? 1 : 0)
    }

    /// Problems found in the shards' internal structures (empty when sound).
    func checkInvariants() -> [String] {
        shards.flatMap { shard in shard.withLock { $0.checkInvariants() } }
    }
}

/// How a ``MemoryCache`` chooses entries for eviction.
public enum EvictionPolicy: Sendable {
    /// S3-FIFO (Yang et al., SOSP 2023): a small probation queue, a main
    /// queue with second chances and a ghost queue of recent evictions.
    /// Higher hit ratios than LRU on skewed (Zipf-like) workloads and
    /// cheaper hits. The default.
    case s3fifo
    /// Least recently used: every hit moves the entry to the front.
    case lru
}
