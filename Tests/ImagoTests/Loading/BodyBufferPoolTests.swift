import Foundation
import Testing

@testable import Imago

@Suite("BodyBufferPool: memory for large bodies, reused only once nothing holds it")
struct BodyBufferPoolTests {
    /// Fills `count` bytes of a buffer from the pool and returns them as Data.
    func body(from pool: BodyBufferPool, count: Int, byte: UInt8) -> (data: Data, address: UnsafeMutableRawPointer) {
        let buffer = pool.take(count: count)
        buffer.base.initializeMemory(as: UInt8.self, repeating: byte, count: count)
        return (buffer.data(count: count), buffer.base)
    }

    @Test("a buffer goes back to the pool when its last Data is released, and the next body of about its size reuses it")
    func reuse() {
        let pool = BodyBufferPool(budget: 8 << 20)
        var first: (data: Data, address: UnsafeMutableRawPointer)? = body(from: pool, count: 300_000, byte: 1)
        // Given a body still held, when another is taken, then it gets other memory.
        let second = body(from: pool, count: 300_000, byte: 2)
        #expect(second.address != first?.address)
        #expect(first?.data.allSatisfy { $0 == 1 } == true)
        #expect(pool.idleBytes == 0)
        // When the first is released, its memory (rounded up to 64 KiB) is idle and taken next.
        let address = first?.address
        first = nil
        #expect(pool.idleBytes == 320 << 10)
        let third = body(from: pool, count: 290_000, byte: 3)
        #expect(third.address == address)
        #expect(second.data.allSatisfy { $0 == 2 } && third.data.allSatisfy { $0 == 3 })
    }

    @Test("a buffer never handed out as Data still goes back")
    func unused() {
        let pool = BodyBufferPool(budget: 8 << 20)
        _ = pool.take(count: 100_000)
        #expect(pool.idleBytes == 128 << 10)
    }

    @Test("an idle buffer more than twice the size asked for is left; what exceeds the budget is freed")
    func limits() {
        let pool = BodyBufferPool(budget: 1 << 20)
        _ = body(from: pool, count: 1 << 20, byte: 0)
        #expect(pool.idleBytes == 1 << 20)
        do {
            let small = body(from: pool, count: 100_000, byte: 0)
            #expect(pool.idleBytes == 1 << 20)  // not taken: 1 MiB > 2 x 100,000
            #expect(small.data.count == 100_000)
        }
        #expect(pool.idleBytes == 1 << 20)  // released over the budget: freed
    }
}
