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
/// All queues are doubly linked lists threaded through one array of nodes, so
/// every operation is O(1) amortised and allocation-free once warm.
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

    @usableFromInline
    struct Node {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// Nanoseconds on the cache's clock after which the entry is expired.
        @usableFromInline var expiry: Int64
        @usableFromInline var frequency: UInt8
        @usableFromInline var queue: Queue
        @usableFromInline var previous: Int32
        @usableFromInline var next: Int32

        @inlinable
        init(key: Key?, value: Value?, cost: Int, expiry: Int64, frequency: UInt8, queue: Queue, previous: Int32, next: Int32) {
            self.key = key
            self.value = value
            self.cost = cost
            self.expiry = expiry
            self.frequency = frequency
            self.queue = queue
            self.previous = previous
            self.next = next
        }
    }

    /// A FIFO list of node indices; `head` is the newest, `tail` the oldest.
    @usableFromInline
    struct List: Sendable {
        @usableFromInline var head: Int32 = -1
        @usableFromInline var tail: Int32 = -1
        @usableFromInline var count = 0
        @usableFromInline var cost = 0

        @inlinable init() {}
    }

    @inlinable static var none: Int32 { -1 }
    @inlinable static var maxFrequency: UInt8 { 3 }

    @usableFromInline let policy: EvictionPolicy
    @usableFromInline var limits: Limits
    @usableFromInline var nodes: [Node] = []
    @usableFromInline var freeNodes: [Int32] = []
    @usableFromInline var index: [Key: Int32] = [:]
    @usableFromInline var small = List()
    @usableFromInline var main = List()
    @usableFromInline var ghost = GhostQueue()
    /// Entries evicted by the limits or a trim, since creation.
    @usableFromInline var evictionCount = 0

    @usableFromInline
    init(policy: EvictionPolicy, limits: Limits) {
        self.policy = policy
        self.limits = limits
    }

    @inlinable var totalCount: Int { small.count + main.count }
    @inlinable var totalCost: Int { small.cost + main.cost }

    // MARK: Operations

    /// The value for `key`, counting the access; nil (and the entry removed)
    /// if it expired at or before `now`.
    @inlinable
    mutating func value(forKey key: Key, now: Int64) -> Value? {
        guard let slot = index[key] else { return nil }
        let i = Int(slot)
        if nodes[i].expiry <= now {
            _ = remove(slot: slot)
            return nil
        }
        recordAccess(slot)
        return nodes[i].value
    }

    /// Stores `value`. Returns false (and removes any older value for `key`)
    /// when the entry alone is costlier than the entry cost limit.
    @inlinable @discardableResult
        mutating func setValue(_ value: Value, forKey key: Key, cost: Int, expiry: Int64) -> Bool {
        guard cost <= limits.entryCost, cost <= limits.cost, limits.count > 0 else {
            if let slot = index[key] { _ = remove(slot: slot) }
            return false
        }
        if let slot = index[key] {
            // An update counts as an access. The entry leaves its list while
            // room is made, so that it cannot be its own victim.
            let i = Int(slot)
            let queue = nodes[i].queue
            unlink(slot)
            evict(toCount: limits.count - 1, cost: limits.cost - cost)
            nodes[i].value = value
            nodes[i].cost = cost
            nodes[i].expiry = expiry
            nodes[i].frequency = min(nodes[i].frequency + 1, Self.maxFrequency)
            push(slot, to: queue)
            return true
        }
        // A key seen recently (still in the ghost queue) skips probation.
        let queue: Queue = policy == .lru || ghost.remove(key.hashValue) ? .main : .small
        // Make room first, as the paper does, so the entry is not its own victim.
        evict(toCount: limits.count - 1, cost: limits.cost - cost)
        let slot = allocate(Node(
            key: key, value: value, cost: cost, expiry: expiry,
            frequency: 0, queue: queue, previous: Self.none, next: Self.none
        ))
        index[key] = slot
        push(slot, to: queue)
        return true
    }

    @inlinable
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return remove(slot: slot)
    }

    @inlinable
    mutating func removeAll() {
        nodes.removeAll()
        freeNodes.removeAll()
        index.removeAll()
        small = List()
        main = List()
        ghost = GhostQueue()
    }

    /// Removes every entry that expired at or before `now`. O(n).
    @inlinable
    mutating func removeExpired(now: Int64) {
        for slot in nodes.indices where nodes[slot].queue != .free && nodes[slot].expiry <= now {
            _ = remove(slot: Int32(slot))
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
        let smallIsLarge = small.count >= max(1, countLimit / 10) || small.cost >= costLimit / 10
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
        while small.tail != Self.none {
            let slot = small.tail
            let i = Int(slot)
            unlink(slot)
            if nodes[i].frequency > 0 {
                nodes[i].frequency = 0
                push(slot, to: .main)
            } else {
                if let key = nodes[i].key {
                    ghost.insert(key.hashValue, capacity: max(main.count, 16))
                }
                release(slot)
                return
            }
        }
    }

    /// Gives every entry read since its last pass another round (one less
    /// frequency) and evicts the first one that was not read.
    @inlinable
    mutating func evictFromMain() {
        while main.tail != Self.none {
            let slot = main.tail
            let i = Int(slot)
            if nodes[i].frequency > 0 {
                nodes[i].frequency -= 1
                unlink(slot)
                push(slot, to: .main)
            } else {
                _ = remove(slot: slot)
                return
            }
        }
    }

    // MARK: Nodes and lists

    @inlinable
    mutating func recordAccess(_ slot: Int32) {
        let i = Int(slot)
        switch policy {
        case .s3fifo:
            if nodes[i].frequency < Self.maxFrequency { nodes[i].frequency += 1 }
        case .lru:
            if main.head != slot {
                unlink(slot)
                push(slot, to: .main)
            }
        }
    }

    @inlinable
    mutating func allocate(_ node: Node) -> Int32 {
        if let slot = freeNodes.popLast() {
            nodes[Int(slot)] = node
            return slot
        }
        nodes.append(node)
        return Int32(nodes.count - 1)
    }

    @inlinable
    mutating func remove(slot: Int32) -> Value? {
        unlink(slot)
        let value = nodes[Int(slot)].value
        release(slot)
        return value
    }

    /// Frees a node that is already unlinked, dropping its key and value.
    @inlinable
    mutating func release(_ slot: Int32) {
        let i = Int(slot)
        if let key = nodes[i].key { index.removeValue(forKey: key) }
        nodes[i].key = nil
        nodes[i].value = nil
        nodes[i].queue = .free
        freeNodes.append(slot)
    }

    @inlinable
    mutating func push(_ slot: Int32, to queue: Queue) {
        let i = Int(slot)
        nodes[i].queue = queue
        nodes[i].previous = Self.none
        withList(queue) { list, nodes in
            nodes[i].next = list.head
            if list.head != Self.none { nodes[Int(list.head)].previous = slot }
            list.head = slot
            if list.tail == Self.none { list.tail = slot }
            list.count += 1
            list.cost += nodes[i].cost
        }
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        let i = Int(slot)
        let previous = nodes[i].previous
        let next = nodes[i].next
        withList(nodes[i].queue) { list, nodes in
            if previous != Self.none { nodes[Int(previous)].next = next } else { list.head = next }
            if next != Self.none { nodes[Int(next)].previous = previous } else { list.tail = previous }
            list.count -= 1
            list.cost -= nodes[i].cost
        }
        nodes[i].previous = Self.none
        nodes[i].next = Self.none
    }

    @inlinable
    mutating func withList(_ queue: Queue, _ body: (inout List, inout [Node]) -> Void) {
        switch queue {
        case .small: body(&small, &nodes)
        case .main: body(&main, &nodes)
        case .free: break
        }
    }

    // MARK: Invariants

    /// Checks the lists, the index and the totals against each other; used by
    /// the tests after random operation sequences.
    func checkInvariants() -> [String] {
        var problems: [String] = []
        var seen = Set<Int32>()
        for (queue, list) in [(Queue.small, small), (Queue.main, main)] {
            var count = 0
            var cost = 0
            var previous = Self.none
            var slot = list.head
            while slot != Self.none {
                let node = nodes[Int(slot)]
                if node.queue != queue { problems.append("node \(slot) in \(queue) list says \(node.queue)") }
                if node.previous != previous { problems.append("node \(slot) has a wrong back link") }
                if !seen.insert(slot).inserted { problems.append("node \(slot) is linked twice"); break }
                if let key = node.key, index[key] != slot { problems.append("node \(slot) is not indexed") }
                count += 1
                cost += node.cost
                previous = slot
                slot = node.next
            }
            if list.tail != previous { problems.append("\(queue) tail is \(list.tail), expected \(previous)") }
            if list.count != count || list.cost != cost { problems.append("\(queue) totals are off") }
        }
        if seen.count != index.count { problems.append("index has \(index.count) keys, lists \(seen.count)") }
        if totalCount > limits.count || totalCost > limits.cost { problems.append("over the limits") }
        return problems
    }
}

/// The keys (as hash values) of entries recently evicted from the small queue,
/// oldest first, in a ring buffer with a multiset for membership.
@usableFromInline
struct GhostQueue: Sendable {
    @usableFromInline var ring: [Int] = []
    @usableFromInline var start = 0
    @usableFromInline var ringCount = 0
    @usableFromInline var members: [Int: Int] = [:]

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
        members[hash, default: 0] += 1
    }

    /// Removes one occurrence of `hash` from the membership and tells whether
    /// it was there. Its ring slot is left to age out; the ghost queue is a
    /// hint, so the rare miscount this allows costs at most one promotion.
    @inlinable
    mutating func remove(_ hash: Int) -> Bool {
        guard let n = members[hash] else { return false }
        members[hash] = n > 1 ? n - 1 : nil
        return true
    }

    @inlinable
    mutating func popOldest() {
        let hash = ring[start]
        start = (start + 1) % ring.count
        ringCount -= 1
        if let n = members[hash] { members[hash] = n > 1 ? n - 1 : nil }
    }
}

extension CachePolicyState: Sendable where Key: Sendable, Value: Sendable {}
extension CachePolicyState.Node: Sendable where Key: Sendable, Value: Sendable {}
