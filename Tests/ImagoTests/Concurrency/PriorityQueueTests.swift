import Dispatch
import Foundation
import ImagoSandbox
import Testing

@testable import ImagoCaching
@testable import ImagoConcurrency

@Suite("PriorityQueue: highest first, first come first served, lazy moves; Locked's condition")
struct PriorityQueueTests {
    typealias Priority = WorkPriority

    /// The owner's side: each queued item's current priority.
    struct Owner {
        var queue = PriorityQueue<Int>()
        var current: [Int: Priority] = [:]

        mutating func add(_ id: Int, _ priority: Priority) {
            current[id] = priority
            queue.append(id, at: priority)
        }

        mutating func move(_ id: Int, to priority: Priority) {
            guard current[id] != nil, current[id] != priority else { return }
            current[id] = priority
            queue.append(id, at: priority)
        }

        mutating func next(decide: (Int) -> PriorityQueue<Int>.Decision = { _ in .take }) -> Int? {
            let current = current
            guard let id = queue.removeFirst(isQueued: { current[$0] == $1 }, decide: decide) else { return nil }
            self.current[id] = nil
            return id
        }

        mutating func drain() -> [Int] {
            var order: [Int] = []
            while let id = next() { order.append(id) }
            return order
        }
    }

    @Test("highest level first, arrival order within a level")
    func order() {
        var owner = Owner()
        owner.add(1, .low)
        owner.add(2, .high)
        owner.add(3, .normal)
        owner.add(4, .high)
        owner.add(5, .veryHigh)
        #expect(owner.drain() == [5, 2, 4, 3, 1])
        #expect(owner.queue.placeCount == 0)
    }

    @Test("a moved item goes to the back of its new level; returning takes back its old place")
    func moves() {
        var owner = Owner()
        owner.add(1, .normal)
        owner.add(2, .normal)
        owner.add(3, .high)
        owner.move(1, to: .high)
        owner.move(2, to: .high)
        owner.move(2, to: .normal)
        #expect(owner.drain() == [3, 1, 2])
    }

    @Test("items that left are skipped; items the caller skips keep their place; a stop takes nothing")
    func skipsAndRefusals() {
        var owner = Owner()
        for id in 1...6 { owner.add(id, id.isMultiple(of: 2) ? .high : .normal) }
        owner.current[2] = nil  // left the queue (cancelled)
        #expect(owner.next(decide: { $0 == 4 ? .skip : .take }) == 6, "4 is skipped, 6 behind it is taken")
        #expect(owner.next(decide: { $0 == 4 ? .stop : .take }) == nil, "4 holds the queue: nothing behind it, not even a lower level")
        #expect(owner.drain() == [4, 1, 3, 5])
    }

    @Test("property: without moves, the order is (priority descending, arrival) for random traffic")
    func randomTraffic() {
        var generator = SeededGenerator(seed: 21)
        var owner = Owner()
        var reference: [(id: Int, priority: Priority)] = []
        var nextID = 0
        for _ in 0..<5_000 {
            if Int.random(in: 0..<3, using: &generator) < 2 {
                let priority = Priority.allCases.randomElement(using: &generator)!
                owner.add(nextID, priority)
                reference.append((nextID, priority))
                nextID += 1
            } else if Bool.random(using: &generator), let leaving = reference.indices.randomElement(using: &generator) {
                owner.current[reference.remove(at: leaving).id] = nil
            } else {
                let expected = reference.indices.max { (reference[$0].priority, $1) < (reference[$1].priority, $0) }
                #expect(owner.next() == expected.map { reference[$0].id })
                if let expected { reference.remove(at: expected) }
            }
        }
        #expect(owner.drain() == reference.sorted { ($0.priority, $1.id) > ($1.priority, $0.id) }.map(\.id))
    }

    @Test("a thread sleeping in withLockWhenReady wakes when signalled with its condition met")
    func conditionWakes() async {
        let locked = Locked<[Int]>([])
        let taken = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            while let value = locked.withLockWhenReady({ values -> Int?? in
                if let first = values.first { return .some(values.removeFirst() == -1 ? nil : first) }
                return nil
            }) {
                taken.withLock { $0.append(value) }
            }
            done.signal()
        }
        thread.start()
        for value in [1, 2, 3, -1] {
            locked.withLock { $0.append(value) }
            locked.signalOne()
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                done.wait()
                continuation.resume()
            }
        }
        #expect(taken.withLock { $0 } == [1, 2, 3])
    }
}
