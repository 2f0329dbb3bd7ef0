/// A hash table from keys to slots for a cache that has already hashed the
/// key (to pick a shard): open addressing with linear probing over the
/// hash the caller passes in, so a lookup hashes nothing again. The keys
/// themselves live in the caller's slots; `key(at:)` reads them back for
/// the equality check, and each bucket keeps the full hash, so a probe
/// compares keys only when the hashes match.
///
/// Deletion shifts the following entries back (no tombstones), so probe
/// lengths stay short however many keys come and go. Not thread-safe.
@usableFromInline
struct SlotIndex: Sendable {
    @usableFromInline
    struct Bucket: Sendable {
        @usableFromInline var hash: Int
        /// The caller's slot; `SlotIndex.empty` for an empty bucket.
        @usableFromInline var slot: Int32

        @inlinable init(hash: Int, slot: Int32) {
            self.hash = hash
            self.slot = slot
        }
    }

    @inlinable static var empty: Int32 { -1 }

    @usableFromInline var buckets: [Bucket]
    @usableFromInline var mask: Int
    @usableFromInline private(set) var count = 0

    @inlinable
    init() {
        buckets = Array(repeating: Bucket(hash: 0, slot: Self.empty), count: 16)
        mask = 15
    }

    /// The slot of the key with `hash` for which `isKey` is true, if any.
    @inlinable
    func slot(hash: Int, isKey: (Int32) -> Bool) -> Int32? {
        var i = hash & mask
        while true {
            let bucket = buckets[i]
            if bucket.slot == Self.empty { return nil }
            if bucket.hash == hash, isKey(bucket.slot) { return bucket.slot }
            i = (i + 1) & mask
        }
    }

    /// Adds a key that is not in the index yet.
    @inlinable
    mutating func insert(hash: Int, slot: Int32) {
        if (count + 1) * 2 > buckets.count { grow() }
        var i = hash & mask
        while buckets[i].slot != Self.empty { i = (i + 1) & mask }
        buckets[i] = Bucket(hash: hash, slot: slot)
        count += 1
    }

    /// Removes the entry for `slot`, whose key has `hash` (one of them, if
    /// the caller indexes a hash more than once under the same slot).
    @inlinable
    mutating func remove(hash: Int, slot: Int32) {
        var i = hash & mask
        while buckets[i].slot != slot || buckets[i].hash != hash {
            guard buckets[i].slot != Self.empty else { return }
            i = (i + 1) & mask
        }
        // Shift back each following entry that may not sit beyond the hole.
        var hole = i
        var j = i
        while true {
            j = (j + 1) & mask
            let bucket = buckets[j]
            if bucket.slot == Self.empty { break }
            let home = bucket.hash & mask
            // Distances from home, wrapping: the entry at j may fill the hole
            // if its home is not in the cyclic range (hole, j].
            if (j - home) & mask >= (j - hole) & mask {
                buckets[hole] = bucket
                hole = j
            }
        }
        buckets[hole] = Bucket(hash: 0, slot: Self.empty)
        count -= 1
    }

    @inlinable
    mutating func removeAll() {
        self = SlotIndex()
    }

    @usableFromInline
    mutating func grow() {
        let old = buckets
        buckets = Array(repeating: Bucket(hash: 0, slot: Self.empty), count: old.count * 2)
        mask = buckets.count - 1
        count = 0
        for bucket in old where bucket.slot != Self.empty { insert(hash: bucket.hash, slot: bucket.slot) }
    }

    /// Every slot indexed, in bucket order (for invariant checks).
    func slots() -> [Int32] {
        buckets.compactMap { $0.slot == Self.empty ? nil : $0.slot }
    }
}
