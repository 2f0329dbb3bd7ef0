/// Identifiers queued by ``WorkPriority``: highest level first, first
/// come first served within a level. The one queue behind the semaphores
/// and the decode threads.
///
/// The queue holds places, not the items' state: the owner keeps each item's
/// current priority (or forgets it when it leaves), and ``removeFirst(isQueued:decide:)``
/// asks it. So moving an item is O(1): ``append(_:at:)`` gives it a place at
/// the back of its new level, and the place it left is dropped lazily when
/// reached. An item that returns to a level it left takes back its old place.
struct PriorityQueue<ID: Sendable>: Sendable {
    typealias Priority = WorkPriority

    private var levels = [[ID]](repeating: [], count: Priority.allCases.count)
    /// The first place still to look at in each level: places before it are spent.
    private var heads = [Int](repeating: 0, count: Priority.allCases.count)

    /// Adds a place for `id` at the back of `priority`'s level.
    mutating func append(_ id: ID, at priority: Priority) {
        levels[priority.rawValue].append(id)
    }

    /// What the caller makes of a queued item ``removeFirst(isQueued:decide:)`` found.
    enum Decision {
        /// Removes and returns it.
        case take
        /// Leaves it in its place and looks further.
        case skip
        /// Leaves it in its place and looks no further: nothing is removed.
        case stop
    }

    /// Removes and returns the first item, highest level first, that is still
    /// queued at the level of the place found (`isQueued`) and that the caller
    /// takes (`decide`: one skipped keeps its place; a stop ends the search).
    /// Places of items that moved or left are dropped on the way.
    mutating func removeFirst(isQueued: (ID, Priority) -> Bool, decide: (ID) -> Decision = { _ in .take }) -> ID? {
        for level in levels.indices.reversed() {
            let priority = Priority.allCases[level]
            var index = heads[level]
            while index < levels[level].count {
                let id = levels[level][index]
                let queued = isQueued(id, priority)
                if queued {
                    switch decide(id) {
                    case .take: break
                    case .skip:
                        index += 1
                        continue
                    case .stop: return nil
                    }
                }
                drop(at: index, level: level)
                if queued { return id }
                index = max(index, heads[level])
            }
        }
        return nil
    }

    /// Removes the place at `index`: the head advances, or a place behind it is cut out.
    private mutating func drop(at index: Int, level: Int) {
        if index == heads[level] {
            heads[level] += 1
        } else {
            levels[level].remove(at: index)
        }
        if heads[level] == levels[level].count {
            levels[level].removeAll(keepingCapacity: true)
            heads[level] = 0
        }
    }

    /// Places held, stale ones included (for tests).
    var placeCount: Int { zip(levels, heads).reduce(0) { $0 + $1.0.count - $1.1 } }
}
