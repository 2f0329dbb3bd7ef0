import Synchronization

/// The floor under any cache with one lock and one hash table: every
/// operation takes the lock, hashes the key and probes a dictionary that
/// holds as many keys as the cache may (the trace's most frequent ones);
/// nothing is ever evicted, inserted or counted: a set of a key the table
/// holds replaces its value, any other set only looks. No bounded cache can
/// do less per operation; a cache's time over this floor is what its limits
/// and policy cost.
final class LookupFloor<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let table: Mutex<[Key: Value]>

    /// A table holding `value(key)` for every key in `keys`.
    init(keys: [Key], value: (Key) -> Value) {
        table = Mutex(Dictionary(uniqueKeysWithValues: keys.map { ($0, value($0)) }))
    }

    func value(forKey key: Key) -> Value? {
        table.withLock { $0[key] }
    }

    func set(_ value: Value, forKey key: Key) {
        table.withLock { table in
            if let index = table.index(forKey: key) { table.values[index] = value }
        }
    }
}
