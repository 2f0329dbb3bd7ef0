/// Doubly linked lists threaded through one array of slots: the caches' one
/// list primitive (the disk index's LRU order, the memory cache's queues).
///
/// Each slot holds an element and its two links; a freed slot is reused by
/// the next allocation, so once warm nothing allocates. Several lists can
/// share the slots: a ``List`` is only its two ends and its length, kept by
/// the owner. Push, unlink and move are O(1). Not thread-safe.
///
/// ```swift
/// var slots = LinkedSlots<String>()
/// var recent = LinkedSlots<String>.List()
/// let slot = slots.allocate("a")
/// slots.pushFront(slot, onto: &recent)   // newest at the head
/// slots.unlink(slot, from: &recent)
/// slots.release(slot)
/// ```
@usableFromInline
struct LinkedSlots<Element> {
    /// One list's ends (`head` newest, `tail` oldest) and length.
    @usableFromInline
    struct List: Sendable {
        @usableFromInline var head: Int32 = LinkedSlots.none
        @usableFromInline var tail: Int32 = LinkedSlots.none
        @usableFromInline var count = 0

        @inlinable init() {}
    }

    @usableFromInline
    struct Slot {
        @usableFromInline var element: Element
        @usableFromInline var previous: Int32
        @usableFromInline var next: Int32

        @inlinable init(element: Element) {
            self.element = element
            previous = LinkedSlots.none
            next = LinkedSlots.none
        }
    }

    /// The link that points nowhere.
    @inlinable static var none: Int32 { -1 }

    @usableFromInline var slots: [Slot] = []
    @usableFromInline var freeSlots: [Int32] = []

    @inlinable init() {}

    /// The number of slots in use.
    @inlinable var count: Int { slots.count - freeSlots.count }

    /// The element in `slot`. Read in place (`_read`), so that reading one
    /// field copies neither the element nor the references it holds.
    @inlinable
    subscript(slot: Int32) -> Element {
        _read { yield slots[Int(slot)].element }
        _modify { yield &slots[Int(slot)].element }
    }

    /// The slot after `slot` in its list (towards the tail).
    @inlinable func next(_ slot: Int32) -> Int32 { slots[Int(slot)].next }

    /// The slot before `slot` in its list (towards the head).
    @inlinable func previous(_ slot: Int32) -> Int32 { slots[Int(slot)].previous }

    /// Puts `element` in a slot (a freed one if any), in no list yet.
    @inlinable
    mutating func allocate(_ element: Element) -> Int32 {
        if let slot = freeSlots.popLast() {
            slots[Int(slot)] = Slot(element: element)
            return slot
        }
        slots.append(Slot(element: element))
        return Int32(slots.count - 1)
    }

    /// Gives back a slot that is in no list. Its element stays until the slot
    /// is reused: clear references in it first if they must go now.
    @inlinable
    mutating func release(_ slot: Int32) {
        freeSlots.append(slot)
    }

    /// Links `slot` at the head of `list`.
    @inlinable
    mutating func pushFront(_ slot: Int32, onto list: inout List) {
        let i = Int(slot)
        slots[i].previous = Self.none
        slots[i].next = list.head
        if list.head != Self.none { slots[Int(list.head)].previous = slot }
        list.head = slot
        if list.tail == Self.none { list.tail = slot }
        list.count += 1
    }

    /// Takes `slot` out of `list`.
    @inlinable
    mutating func unlink(_ slot: Int32, from list: inout List) {
        let i = Int(slot)
        let previous = slots[i].previous
        let next = slots[i].next
        if previous != Self.none { slots[Int(previous)].next = next } else { list.head = next }
        if next != Self.none { slots[Int(next)].previous = previous } else { list.tail = previous }
        slots[i].previous = Self.none
        slots[i].next = Self.none
        list.count -= 1
    }

    /// Moves `slot`, which is in `list`, to its head.
    @inlinable
    mutating func moveToFront(_ slot: Int32, in list: inout List) {
        guard list.head != slot else { return }
        unlink(slot, from: &list)
        pushFront(slot, onto: &list)
    }

    /// Frees every slot.
    @inlinable
    mutating func removeAll() {
        slots.removeAll()
        freeSlots.removeAll()
    }

    /// The slots of `list`, from the tail (oldest) to the head.
    func oldestFirst(_ list: List) -> [Int32] {
        var result: [Int32] = []
        result.reserveCapacity(list.count)
        var slot = list.tail
        while slot != Self.none, result.count <= count {
            result.append(slot)
            slot = previous(slot)
        }
        return result
    }

    /// Problems in `list`'s links (empty when sound), and its slots from the
    /// head; a walk stops at a cycle.
    func check(_ list: List, name: String) -> (slots: [Int32], problems: [String]) {
        var problems: [String] = []
        var visited: [Int32] = []
        var seen = Set<Int32>()
        var previous = Self.none
        var slot = list.head
        while slot != Self.none {
            guard seen.insert(slot).inserted else {
                problems.append("\(name): slot \(slot) is linked twice")
                break
            }
            if self.previous(slot) != previous { problems.append("\(name): slot \(slot) has a wrong back link") }
            visited.append(slot)
            previous = slot
            slot = next(slot)
        }
        if list.tail != previous { problems.append("\(name): tail is \(list.tail), expected \(previous)") }
        if list.count != visited.count { problems.append("\(name): counts \(list.count), links \(visited.count)") }
        return (visited, problems)
    }
}

extension LinkedSlots: Sendable where Element: Sendable {}
extension LinkedSlots.Slot: Sendable where Element: Sendable {}
