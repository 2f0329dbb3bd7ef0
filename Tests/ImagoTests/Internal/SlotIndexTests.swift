import ImagoSandbox
import Testing

@testable import ImagoCaching

@Suite("SlotIndex: open addressing over the caller's hash, against a dictionary")
struct SlotIndexTests {
    @Test("inserts and removes with colliding, wrapping hashes find exactly the keys a dictionary holds", arguments: [4, 1 << 20])
    func againstDictionary(hashRange: Int) {
        // Given keys whose hashes often collide (a range of 4) or rarely do, some
        // near the top of the table so probes wrap around its end
        var index = SlotIndex()
        var model: [Int32: Int] = [:]  // slot (standing in for the key) -> hash
        var generator = SeededGenerator(seed: 11)
        var nextSlot: Int32 = 0
        func find(_ slot: Int32, _ hash: Int) -> Int32? { index.slot(hash: hash) { $0 == slot } }

        for step in 0..<20_000 {
            if model.isEmpty || Int.random(in: 0..<5, using: &generator) < 3 {
                let hash = Int.random(in: 0..<hashRange, using: &generator) - (Bool.random(using: &generator) ? 1 : 0)
                index.insert(hash: hash, slot: nextSlot)
                model[nextSlot] = hash
                nextSlot += 1
            } else {
                let (slot, hash) = model.randomElement(using: &generator)!
                index.remove(hash: hash, slot: slot)
                model[slot] = nil
            }
            // Then every key in the model is found, under its hash, and nothing else is there
            if step % 97 == 0 || step == 19_999 {
                let missing = model.filter { find($0.key, $0.value) != $0.key }
                #expect(missing.isEmpty, "step \(step): \(missing.count) keys not found")
                #expect(index.count == model.count && Set(index.slots()) == Set(model.keys))
                if !missing.isEmpty { break }
            }
        }
        // And a removed key is not found
        if let (slot, hash) = model.first {
            index.remove(hash: hash, slot: slot)
            #expect(find(slot, hash) == nil)
        }
    }
}
