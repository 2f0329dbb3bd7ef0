import Foundation
import ImagoCaching
import ImagoConcurrency

/// Memory for response bodies of a known, large size, handed to the next
/// body once the last `Data` made from it is gone.
///
/// A body copied into fresh memory faults every page in on the event loop,
/// hundreds of faults for a photo. Memory an earlier body has touched
/// costs none. The pool keeps
/// at most `budget` bytes that no body uses; what does not fit is freed.
final class BodyBufferPool: Sendable {
    /// One buffer lent out. It goes back to its pool when the collector that
    /// filled it and every `Data` made from it are gone.
    final class Buffer: @unchecked Sendable {
        // Unchecked: the bytes are written by one ResponseCollector under its
        // lock, and read only through `Data` made after they were written.
        let base: UnsafeMutableRawPointer
        let capacity: Int
        private let pool: BodyBufferPool

        fileprivate init(base: UnsafeMutableRawPointer, capacity: Int, pool: BodyBufferPool) {
            self.base = base
            self.capacity = capacity
            self.pool = pool
        }

        deinit { pool.keep(base, capacity: capacity) }

        /// The first `count` bytes, without copying them; the `Data` holds
        /// the buffer until it is released.
        func data(count: Int) -> Data {
            Data(bytesNoCopy: base, count: count, deallocator: .custom { _, _ in withExtendedLifetime(self) {} })
        }
    }

    /// Bodies of at least this many bytes come from the pool.
    static let smallest = 64 << 10

    /// The pool response bodies use.
    static let shared = BodyBufferPool(budget: 16 << 20)

    private struct Idle {
        /// Addresses (as integers: pointers are not Sendable) and capacities.
        var buffers: [(address: UInt, capacity: Int)] = []
        var bytes = 0
    }

    private let idle = Locked(Idle())
    let budget: Int

    init(budget: Int) {
        self.budget = budget
    }

    /// A buffer of at least `count` bytes: an idle one no more than twice
    /// that size, or new memory.
    func take(count: Int) -> Buffer {
        let reused = idle.withLock { idle -> (address: UInt, capacity: Int)? in
            let fitting = idle.buffers.indices.filter { idle.buffers[$0].capacity >= count && idle.buffers[$0].capacity <= 2 * count }
            guard let best = fitting.min(by: { idle.buffers[$0].capacity < idle.buffers[$1].capacity }) else { return nil }
            idle.bytes -= idle.buffers[best].capacity
            return idle.buffers.remove(at: best)
        }
        if let reused, let base = UnsafeMutableRawPointer(bitPattern: reused.address) {
            return Buffer(base: base, capacity: reused.capacity, pool: self)
        }
        // Rounded up, so that bodies of about the same size can share.
        let capacity = (count + Self.smallest - 1) / Self.smallest * Self.smallest
        return Buffer(base: .allocate(byteCount: capacity, alignment: 64), capacity: capacity, pool: self)
    }

    /// The bytes idle in the pool.
    var idleBytes: Int { idle.withLock { $0.bytes } }

    private func keep(_ base: UnsafeMutableRawPointer, capacity: Int) {
        let kept = idle.withLock { idle in
            guard idle.bytes + capacity <= budget else { return false }
            idle.buffers.append((UInt(bitPattern: base), capacity))
            idle.bytes += capacity
            return true
        }
        if !kept { base.deallocate() }
    }
}
