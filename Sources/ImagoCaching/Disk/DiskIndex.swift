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
    }

    private var records = LinkedSlots<Record>()
    /// Most recently used at the head.
    private var recency = LinkedSlots<Record>.List()
    private var slots: [EntryHash: Int32] = [:]
    private var nextGeneration: UInt64 = 1
    private(set) var totalSize: Int64 = 0

    var count: Int { slots.count }

    init() {}

    /// Builds an index from records ordered least recently used first.
    init(oldestFirst: [(hash: EntryHash, size: Int64, accessTime: Int64)]) {
        slots.reserveCapacity(oldestFirst.count)
        for record in oldestFirst {
            insert(record.hash, size: record.size, accessTime: record.accessTime)
        }
    }

    func record(for hash: EntryHash) -> Record? {
        slots[hash].map { records[$0] }
    }

    /// Marks the entry as used at `time` and returns it.
    mutating func touch(_ hash: EntryHash, at time: Int64) -> Record? {
        guard let slot = slots[hash] else { return nil }
        records[slot].accessTime = time
        records.moveToFront(slot, in: &recency)
        return records[slot]
    }

    /// Adds an entry, or replaces the one with the same hash, as the most
    /// recently used; returns its generation.
    @discardableResult
    mutating func insert(_ hash: EntryHash, size: Int64, accessTime: Int64) -> UInt64 {
        let generation = nextGeneration
        nextGeneration += 1
        let record = Record(hash: hash, size: size, accessTime: accessTime, generation: generation)
        if let slot = slots[hash] {
            totalSize += size - records[slot].size
            records[slot] = record
            records.moveToFront(slot, in: &recency)
            return generation
        }
        let slot = records.allocate(record)
        slots[hash] = slot
        totalSize += size
        records.pushFront(slot, onto: &recency)
        return generation
    }

    @discardableResult
    mutating func remove(_ hash: EntryHash) -> Record? {
        guard let slot = slots.removeValue(forKey: hash) else { return nil }
        records.unlink(slot, from: &recency)
        records.release(slot)
        let record = records[slot]
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
        var slot = recency.tail
        while slot != LinkedSlots<Record>.none {
            if records[slot].hash != excluded { return records[slot] }
            slot = records.previous(slot)
        }
        return nil
    }

    /// Every record, least recently used first.
    var oldestFirst: [Record] {
        records.oldestFirst(recency).map { records[$0] }
    }

    // MARK: Invariants

    /// Problems found in the list, the dictionary and the total (empty when sound).
    func checkInvariants() -> [String] {
        let (listed, problems) = records.check(recency, name: "recency")
        var found = problems
        for slot in listed where slots[records[slot].hash] != slot { found.append("record \(slot) is not indexed") }
        if listed.count != slots.count { found.append("list has \(listed.count) records, dictionary \(slots.count)") }
        let size = listed.reduce(Int64(0)) { $0 + records[$1].size }
        if size != totalSize { found.append("total size \(totalSize), records add up to \(size)") }
        return found
    }
}
