import Synchronization

/// The baseline the memory cache is measured against: the simplest fast
/// design, as Nuke's memory cache is built since 13.0.5. A dictionary from
/// key to slot, a ring of slots with a reference bit, CLOCK eviction, one
/// mutex, a count limit only. Written here for the comparison, not used by
/// the library; in the benchmark's own module, so that it is specialised
/// for the key type as a client's own cache would be.
final class ClockCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Slot {
        var key: Key
        var value: Value
        var referenced: Bool
    }

    private struct State {
        var slots: [Slot] = []
        var index: [Key: Int] = [:]
        var hand = 0
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// A cache of at most `capacity` entries.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The value for `key`, marking it referenced.
    func value(forKey key: Key) -> Value? {
        state.withLock { state in
            guard let slot = state.index[key] else { return nil }
            state.slots[slot].referenced = true
            return state.slots[slot].value
        }
    }

    /// Stores `value`; a full cache evicts the first unreferenced slot from
    /// the hand on, clearing the bits it passes.
    func set(_ value: Value, forKey key: Key) {
        state.withLock { state in
            if let slot = state.index[key] {
                state.slots[slot].value = value
                state.slots[slot].referenced = true
                return
            }
            guard state.slots.count == capacity else {
                state.index[key] = state.slots.count
                state.slots.append(Slot(key: key, value: value, referenced: false))
                return
            }
            while state.slots[state.hand].referenced {
                state.slots[state.hand].referenced = false
                state.hand = (state.hand + 1) % capacity
            }
            state.index[state.slots[state.hand].key] = nil
            state.slots[state.hand] = Slot(key: key, value: value, referenced: false)
            state.index[key] = state.hand
            state.hand = (state.hand + 1) % capacity
        }
    }
}
