import ImagoSandbox
import Testing

@testable import ImagoCaching

@Suite("LinkedSlots: lists threaded through one array, against a model")
struct LinkedSlotsTests {
    @Test("push, unlink, move and release keep two lists equal to plain arrays, and freed slots are reused")
    func randomOperations() {
        // Given two lists sharing one array of slots, and the same lists as arrays (newest first)
        var slots = LinkedSlots<Int>()
        var lists = [LinkedSlots<Int>.List(), LinkedSlots<Int>.List()]
        var model: [[Int32]] = [[], []]
        var generator = SeededGenerator(seed: 5)
        var highestSlot: Int32 = -1
        var peakLive = 0

        // When random operations run on both
        for step in 0..<5_000 {
            let which = Int.random(in: 0...1, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0, 1:
                let slot = slots.allocate(step)
                highestSlot = max(highestSlot, slot)
                slots.pushFront(slot, onto: &lists[which])
                model[which].insert(slot, at: 0)
                peakLive = max(peakLive, model[0].count + model[1].count)
            case 2:
                guard let slot = model[which].randomElement(using: &generator) else { continue }
                slots.moveToFront(slot, in: &lists[which])
                model[which].removeAll { $0 == slot }
                model[which].insert(slot, at: 0)
            default:
                guard let slot = model[which].randomElement(using: &generator) else { continue }
                slots.unlink(slot, from: &lists[which])
                slots.release(slot)
                model[which].removeAll { $0 == slot }
            }
            // Then each list walks as its model, with sound links and counts
            let sound = (0...1).allSatisfy { index in
                let (walked, problems) = slots.check(lists[index], name: "list \(index)")
                return problems.isEmpty && walked == model[index] && slots.oldestFirst(lists[index]) == model[index].reversed()
            }
            guard sound else {
                Issue.record("step \(step): the lists differ from their model")
                break
            }
        }
        #expect(slots.count == model[0].count + model[1].count)
        #expect(Int(highestSlot) + 1 == peakLive, "released slots are reused: the array never outgrows the most slots live at once")
    }
}
