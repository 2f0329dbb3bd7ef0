/// The disk cache's in-memory index: every entry's hash, file size and last
/// access time, in least-recently-used order, with the total size.
///
/// O(1) lookup, touch, insert and removal: a dictionary into an array of
/// records that are threaded onto one doubly linked list (most recent at the
/// head). Not thread-safe; ``DiskCache`` guards it with a lock.
struct DiskIndex: Sendable {
    struct Record: Sendable {
        var hash: EntryHash
        var size: Int64
        /// Seconds since 1970 on the cache's clock.
        var accessTime: Int64
        /// Changes whenever the entry's file is replaced, so that a reader who
        /// found a bad file removes it only if nobody has replaced it since.
        var generation: UInt64
        fileprivate var previous: Int32
        fileprivate var next: Int32
    }

    private static var none: Int32 { -1 }

    private var records: [Record] = []
    private var freeSlots: [Int32] = []
    private var slots: [EntryHash: Int32] = [:]
    private var head: Int32 = -1
    private var tail: Int32 = -1
    private var nextGeneration: UInt64 = 1
    private(set) var totalSize: Int64 = 0

    var count: Int { slots.count }

    init() {}

    /// Builds an index from records ordered least recently used first.
    init(oldestFirst: [(hash: EntryHash, size: Int64, accessTime: Int64)]) {
        records.reserveCapacity(oldestFirst.count)
        slots.reserveCapacity(oldestFirst.count)
        for record in oldestFirst {
            insert(record.hash, size: record.size, accessTime: record.accessTime)
        }
    }

    func record(for hash: EntryHash) -> Record? {
        slots[hash].map { records[Int($0)] }
    }

    /// Marks the entry as used at `time` and returns it.
    mutating func touch(_ hash: EntryHash, at time: Int64) -> Record? {
        guard let slot = slots[hash] else { return nil }
        records[Int(slot)].accessTime = time
        moveToHead(slot)
        return records[Int(slot)]
    }

    /// Adds an entry, or replaces the one with the same hash, as the most
    /// recently used; returns its generation.
    @discardableResult
    mutating func insert(_ hash: EntryHash, size: Int64, accessTime: Int64) -> UInt64 {
        let generation = nextGeneration
        nextGeneration += 1
        if let slot = slots[hash] {
            let i = Int(slot)
            totalSize += size - records[i].size
            records[i].size = size
            records[i].accessTime = accessTime
            records[i].generation = generation
            moveToHead(slot)
            return generation
        }
        let record = Record(hash: hash, size: size, accessTime: accessTime, generation: generation, previous: Self.none, next: Self.none)
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            records[Int(slot)] = record
        } else {
            slot = Int32(records.count)
            records.append(record)
        }
        slots[hash] = slot
        totalSize += size
        linkAtHead(slot)
        return generation
    }

    @discardableResult
    mutating func remove(_ hash: EntryHash) -> Record? {
        guard let slot = slots.removeValue(forKey: hash) else { return nil }
        unlink(slot)
        freeSlots.append(slot)
        let record = records[Int(slot)]
        totalSize -= record.size
        return record
    }

    /// Removes every record that matches. O(n).
    mutating func removeAll(where shouldRemove: (Record) -> Bool) {
        for record in oldestFirst where shouldRemove(record) {
            remove(record.hash)
        }
    }

    /// The least recently used entry other than `excluded`.
    func leastRecentlyUsed(excluding excluded: EntryHash? = nil) -> Record? {
        var slot = tail
        while slot != Self.none {
            let record = records[Int(slot)]
            if record.hash != excluded { return record }
            slot = record.previous
        }
        return nil
    }

    /// Every record, least recently used first.
    var oldestFirst: [Record] {
        var result: [Record] = []
        result.reserveCapacity(count)
        var slot = tail
        while slot != Self.none {
            result.append(records[Int(slot)])
            slot = records[Int(slot)].previous
        }
        return result
    }

    // MARK: List

    private mutating func moveToHead(_ slot: Int32) {
        guard head != slot else { return }
        unlink(slot)
        linkAtHead(slot)
    }

    private mutating func linkAtHead(_ slot: Int32) {
        records[Int(slot)].previous = Self.none
        records[Int(slot)].next = head
        if head != Self.none { records[Int(head)].previous = slot }
        head = slot
        if tail == Self.none { tail = slot }
    }

    private mutating func unlink(_ slot: Int32) {
        let previous = records[Int(slot)].previous
        let next = records[Int(slot)].next
        if previous != Self.none { records[Int(previous)].next = next } else { head = next }
        if next != Self.none { records[Int(next)].previous = previous } else { tail = previous }
        records[Int(slot)].previous = Self.none
        records[Int(slot)].next = Self.none
    }

    // MARK: Invariants

    /// Problems found in the list, the dictionary and the total (empty when sound).
    func checkInvariants() -> [String] {
        var problems: [String] = []
        var seen = 0
        var size: Int64 = 0
        var previous = Self.none
        var slot = head
        while slot != Self.none, seen <= slots.count {
            let record = records[Int(slot)]
            if record.previous != previous { problems.append("record \(slot) has a wrong back link") }
            if slots[record.hash] != slot { problems.append("record \(slot) is not indexed") }
            seen += 1
            size += record.size
            previous = slot
            slot = record.next
        }
        if tail != previous { problems.append("tail is \(tail), expected \(previous)") }
        if seen != slots.count { problems.append("list has \(seen) records, dictionary \(slots.count)") }
        if size != totalSize { problems.append("total size \(totalSize), records add up to \(size)") }
        return problems
    }
}
