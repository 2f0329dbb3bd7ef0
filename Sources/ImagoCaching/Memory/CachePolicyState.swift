/// The single-threaded heart of ``MemoryCache``: entries, limits and eviction.
/// ``MemoryCache`` keeps one of these per shard behind a lock.
///
/// Eviction is S3-FIFO (Juncheng Yang et al., "FIFO queues are all you need for
/// cache eviction", SOSP 2023): new entries enter a small FIFO queue (10% of
/// the capacity); an entry read again while there moves to the main FIFO queue,
/// the others leave and their keys are remembered in a ghost queue, so that a
/// key that comes back soon goes straight to the main queue. The main queue
/// gives entries read since their last pass another round (frequency 0...3)
/// instead of reordering on every hit, which is why a hit costs no list
/// surgery. `.lru` is kept for comparison and for workloads with a strong
/// recency bias.
///
/// Both queues are lists threaded through one ``LinkedSlots``, so every
/// operation is O(1) amortised and allocation-free once warm.
@usableFromInline
struct CachePolicyState<Key: Hashable, Value> {
    @usableFromInline
    struct Limits: Sendable {
        @usableFromInline var count: Int
        @usableFromInline var cost: Int
        @usableFromInline var entryCost: Int
    }

    @usableFromInline
    enum Queue: UInt8, Sendable {
        case small, main, free
    }

    /// An entry's bookkeeping: plain values, so that list and eviction work
    /// never retains or releases anything. Keys and values live in arrays of
    /// their own, indexed by the same slot.
    @usableFromInline
    struct Entry: Sendable {
        /// The key's hash, computed once by ``MemoryCache`` per operation.
        @usableFromInline var hash: Int
        @usableFromInline var cost: Int
        /// Nanoseconds on the cache's clock after which the entry is expired.
        @usableFromInline var expiry: Int64
        @usableFromInline var frequency: UInt8
        @usableFromInline var queue: Queue

        @inlinable
        init(hash: Int, cost: Int, expiry: Int64, queue: Queue) {
            self.hash = hash
            self.cost = cost
            self.expiry = expiry
            frequency = 0
            self.queue = queue
        }
    }

    @usableFromInline typealias Slots = LinkedSlots<Entry>

    @inlinable static var maxFrequency: UInt8 { 3 }

    @usableFromInline let policy: EvictionPolicy
    @usableFromInline var limits: Limits
    @usableFromInline var entries = Slots()
    /// Each slot's key and value (`nil` in a free slot).
    @usableFromInline var keys: [Key?] = []
    @usableFromInline var values: [Value?] = []
    @usableFromInline var index = SlotIndex()
    /// FIFO queues: `head` is the newest, `tail` the oldest.
    @usableFromInline var small = Slots.List()
    @usableFromInline var main = Slots.List()
    @usableFromInline var smallCost = 0
    @usableFromInline var mainCost = 0
    @usableFromInline var ghost = GhostQueue()
    /// Entries evicted by the limits or a trim, since creation.
    @usableFromInline var evictionCount = 0

    @usableFromInline
    init(policy: EvictionPolicy, limits: Limits) {
        self.policy = policy
        self.limits = limits
    }

    @inlinable var totalCount: Int { small.count + main.count }
    @inlinable var totalCost: Int { smallCost + mainCost }

    // MARK: Operations

    /// The slot of `key`, whose hash is `hash`.
    @inlinable
    func slot(of key: Key, hash: Int) -> Int32? {
        index.slot(hash: hash) { keys[Int($0)] == key }
    }

    /// The value for `key` (hashed to `hash`), counting the access; nil (and
    /// the entry removed) if it expired at or before `now`.
    @inlinable
    mutating func value(forKey key: Key, hash: Int, now: Int64) -> Value? {
        guard let slot = slot(of: key, hash: hash) else { return nil }
        if entries[slot].expiry <= now {
            _ = remove(slot: slot)
            return nil
        }
        recordAccess(slot)
        return values[Int(slot)]
    }

    /// Stores `value`. Returns false (and removes any older value for `key`)
    /// when the entry alone is costlier than the entry cost limit.
    @inlinable @discardableResult
    mutating func setValue(_ value: Value, forKey key: Key, hash: Int, cost: Int, expiry: Int64) -> Bool {
        let existing = slot(of: key, hash: hash)
        guard cost <= limits.entryCost, cost <= limits.cost, limits.count > 0 else {
            if let existing { _ = remove(slot: existing) }
            return false
        }
        if let slot = existing {
            // An update counts as an access. The entry leaves its list while
            // room is made, so that it cannot be its own victim.
            let queue = entries[slot].queue
            unlink(slot)
            evict(toCount: limits.count - 1, cost: limits.cost - cost)
            values[Int(slot)] = value
            entries[slot].cost = cost
            entries[slot].expiry = expiry
            entries[slot].frequency = min(entries[slot].frequency + 1, Self.maxFrequency)
            push(slot, to: queue)
            return true
        }
        // A key seen recently (still in the ghost queue) skips probation.
        let queue: Queue = policy == .lru || ghost.remove(hash) ? .main : .small
        // Make room first, as the paper does, so the entry is not its own victim.
        evict(toCount: limits.count - 1, cost: limits.cost - cost)
        let slot = entries.allocate(Entry(hash: hash, cost: cost, expiry: expiry, queue: queue))
        if Int(slot) == keys.count {
            keys.append(key)
            values.append(value)
        } else {
            keys[Int(slot)] = key
            values[Int(slot)] = value
        }
        index.insert(hash: hash, slot: slot)
        push(slot, to: queue)
        return true
    }

    @inlinable
    mutating func removeValue(forKey key: Key, hash: Int) -> Value? {
        guard let slot = slot(of: key, hash: hash) else { return nil }
        return remove(slot: slot)
    }

    @inlinable
    mutating func removeAll() {
        entries.removeAll()
        keys.removeAll()
        values.removeAll()
        index.removeAll()
        small = Slots.List()
        main = Slots.List()
        smallCost = 0
        mainCost = 0
        ghost = GhostQueue()
    }

    /// Removes every entry that expired at or before `now`. O(n).
    @inlinable
    mutating func removeExpired(now: Int64) {
        for slot in entries.slots.indices.map(Int32.init)
        where entries[slot].queue != .free && entries[slot].expiry <= now {
            _ = remove(slot: slot)
        }
    }

    /// Evicts entries in policy order until both totals are within the limits.
    @inlinable
    mutating func evict(toCount countLimit: Int, cost costLimit: Int) {
        while totalCount > 0, totalCount > countLimit || totalCost > costLimit {
            evictOne(countLimit: countLimit, costLimit: costLimit)
            evictionCount += 1
        }
    }

    // MARK: Eviction

    @inlinable
    mutating func evictOne(countLimit: Int, costLimit: Int) {
        guard policy == .s3fifo else {
            _ = remove(slot: main.tail)
            return
        }
        let smallIsLarge = small.count >= max(1, countLimit / 10) || smallCost >= costLimit / 10
        if small.count > 0, smallIsLarge || main.count == 0 {
            evictFromSmall()
        } else {
            evictFromMain()
        }
    }

    /// Walks the small queue from its oldest entry: entries read while on
    /// probation are promoted to the main queue; the first one that was not is
    /// evicted and its key remembered in the ghost queue.
    @inlinable
    mutating func evictFromSmall() {
        while small.tail != Slots.none {
            let slot = small.tail
            unlink(slot)
            if entries[slot].frequency > 0 {
                entries[slot].frequency = 0
                push(slot, to: .main)
            } else {
                ghost.insert(entries[slot].hash, capacity: max(main.count, 16))
                release(slot)
                return
            }
        }
    }

    /// Gives every entry read since its last pass another round (one less
    /// frequency) and evicts the first one that was not read.
    @inlinable
    mutating func evictFromMain() {
        while main.tail != Slots.none {
            let slot = main.tail
            if entries[slot].frequency > 0 {
                entries[slot].frequency -= 1
                entries.moveToFront(slot, in: &main)
            } else {
                _ = remove(slot: slot)
                return
            }
        }
    }

    // MARK: Entries and queues

    @inlinable
    mutating func recordAccess(_ slot: Int32) {
        switch policy {
        case .s3fifo:
            if entries[slot].frequency < Self.maxFrequency { entries[slot].frequency += 1 }
        case .lru:
            entries.moveToFront(slot, in: &main)
        }
    }

    @inlinable
    mutating func remove(slot: Int32) -> Value? {
        unlink(slot)
        let value = values[Int(slot)]
        release(slot)
        return value
    }

    /// Frees an entry that is already unlinked, dropping its key and value.
    @inlinable
    mutating func release(_ slot: Int32) {
        if keys[Int(slot)] != nil { index.remove(hash: entries[slot].hash, slot: slot) }
        keys[Int(slot)] = nil
        values[Int(slot)] = nil
        entries[slot].queue = .free
        entries.release(slot)
    }

    @inlinable
    mutating func push(_ slot: Int32, to queue: Queue) {
        entries[slot].queue = queue
        switch queue {
        case .small:
            entries.pushFront(slot, onto: &small)
            smallCost += entries[slot].cost
        case .main:
            entries.pushFront(slot, onto: &main)
            mainCost += entries[slot].cost
        case .free:
            break
        }
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        switch entries[slot].queue {
        case .small:
            entries.unlink(slot, from: &small)
            smallCost -= entries[slot].cost
        case .main:
            entries.unlink(slot, from: &main)
            mainCost -= entries[slot].cost
        case .free:
            break
        }
    }

    // MARK: Invariants

    /// Checks the queues, the index and the totals against each other; used
    /// by the tests after random operation sequences.
    func checkInvariants() -> [String] {
        var problems: [String] = []
        var linked = 0
        for (queue, list, cost) in [(Queue.small, small, smallCost), (Queue.main, main, mainCost)] {
            let (slots, found) = entries.check(list, name: "\(queue)")
            problems += found
            for slot in slots {
                if entries[slot].queue != queue { problems.append("entry \(slot) in \(queue) list says \(entries[slot].queue)") }
                if let key = keys[Int(slot)], self.slot(of: key, hash: entries[slot].hash) != slot {
                    problems.append("entry \(slot) is not indexed")
                }
                if let key = keys[Int(slot)], key.hashValue != entries[slot].hash { problems.append("entry \(slot) has a wrong hash") }
            }
            if slots.reduce(0, { $0 + entries[$1].cost }) != cost { problems.append("\(queue) cost is off") }
            linked += slots.count
        }
        if linked != index.count { problems.append("index has \(index.count) keys, lists \(linked)") }
        if totalCount > limits.count || totalCost > limits.cost { problems.append("over the limits") }
        return problems
    }
}

/// The keys (as hash values) of entries recently evicted from the small queue,
/// oldest first, in a ring buffer, with a ``SlotIndex`` of the same hashes
/// for membership (a multiset: a hash may be there more than once). The
/// hashes are the ones the cache already computed: nothing is hashed again.
@usableFromInline
struct GhostQueue: Sendable {
    @usableFromInline var ring: [Int] = []
    @usableFromInline var start = 0
    @usableFromInline var ringCount = 0
    @usableFromInline var members = SlotIndex()

    @inlinable init() {}

    @inlinable
    mutating func insert(_ hash: Int, capacity: Int) {
        while ringCount >= capacity, ringCount > 0 { popOldest() }
        if ring.count == ringCount {
            // Grow: unroll the ring into a larger array.
            ring = Array(ring[start...] + ring[..<start]) + Array(repeating: 0, count: max(16, ring.count))
            start = 0
        }
        ring[(start + ringCount) % ring.count] = hash
        ringCount += 1
        members.insert(hash: hash, slot: 0)
    }

    /// Removes one occurrence of `hash` from the membership and tells whether
    /// it was there. Its ring slot is left to age out; the ghost queue is a
    /// hint, so the rare miscount this allows costs at most one promotion.
    @inlinable
    mutating func remove(_ hash: Int) -> Bool {
        guard members.slot(hash: hash, isKey: { _ in true }) != nil else { return false }
        members.remove(hash: hash, slot: 0)
        return true
    }

    @inlinable
    mutating func popOldest() {
        let hash = ring[start]
        start = (start + 1) % ring.count
        ringCount -= 1
        members.remove(hash: hash, slot: 0)
    }
}

extension CachePolicyState: Sendable where Key: Sendable, Value: Sendable {}
