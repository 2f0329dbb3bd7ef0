#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, with a condition variable for
/// threads that sleep until the value says there is work: Imago's one lock
/// type (package-wide, so the test support uses it too).
///
/// Imago uses this rather than `Synchronization.Mutex`: on Linux, `Mutex`
/// waits on a priority-inheritance futex, and when it is contended the
/// kernel hands the lock to the next thread without any atomic operation in
/// user space, so ThreadSanitizer sees no ordering and reports false races
/// (reproduced: four threads appending to an array under a contended `Mutex`
/// gave 11 reports; the same program with a pthread mutex gave none). With a
/// pthread mutex the CI run under `--sanitize=thread` stays meaningful.
///
/// Give it a value with storage, not `Void`: ThreadSanitizer attributes the
/// locked access to a zero-sized value to the object's own address, which is
/// read without the lock, and reports a race that is not there.
///
@usableFromInline
package final class Locked<Value> {
    /// The value, in memory of its own rather than a stored property: an
    /// `inout` access to a class's property is checked for exclusivity at
    /// run time, a noticeable cost in an operation as short as a memory-cache
    /// lookup; the mutex already gives exclusive access. The mutex, the
    /// condition and the value share one allocation (a lock is made per
    /// request on some paths).
    @usableFromInline let value: UnsafeMutablePointer<Value>
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Where the condition and the value start in the allocation, the mutex being first.
    private static var conditionOffset: Int { roundedUp(MemoryLayout<pthread_mutex_t>.stride, to: MemoryLayout<pthread_cond_t>.alignment) }
    private static var valueOffset: Int {
        roundedUp(conditionOffset + MemoryLayout<pthread_cond_t>.stride, to: MemoryLayout<Value>.alignment)
    }

    private static func roundedUp(_ offset: Int, to alignment: Int) -> Int { (offset + alignment - 1) / alignment * alignment }

    @usableFromInline
    package init(_ value: Value) {
        let memory = UnsafeMutableRawPointer.allocate(
            byteCount: Self.valueOffset + MemoryLayout<Value>.stride,
            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<pthread_cond_t>.alignment, MemoryLayout<Value>.alignment))
        mutex = memory.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        condition = (memory + Self.conditionOffset).bindMemory(to: pthread_cond_t.self, capacity: 1)
        self.value = (memory + Self.valueOffset).bindMemory(to: Value.self, capacity: 1)
        self.value.initialize(to: value)
        condition.initialize(to: pthread_cond_t())
        // Timed waits measure on the monotonic clock: setting the wall clock
        // neither shortens nor stretches them.
        var conditionAttributes = pthread_condattr_t()
        pthread_condattr_init(&conditionAttributes)
        pthread_condattr_setclock(&conditionAttributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &conditionAttributes)
        pthread_condattr_destroy(&conditionAttributes)
        mutex.initialize(to: pthread_mutex_t())
        #if canImport(Glibc)
            // Adaptive: spin briefly before sleeping in the kernel. The memory
            // cache's shards are held for tens of nanoseconds, far less than a
            // sleep and wake-up, so two threads sharing a cache do better with a
            // short spin than with the default kind, which sleeps at once.
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
        #else
            pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        pthread_mutex_destroy(mutex)
        pthread_cond_destroy(condition)
        value.deinitialize(count: 1)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    /// Runs `body` if the mutex is free at once; `nil` (without waiting) if another thread holds it.
    @inlinable
    package func tryWithLock<Result>(_ body: (inout Value) -> Result) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return body(&value.pointee)
    }

    /// Runs `body` with the mutex held. Keep it short: no waiting, no user code.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

extension Locked {
    /// Runs `body` with the mutex held until it returns a result, sleeping on
    /// the condition (mutex released) between tries: for threads that wait
    /// for work. `body` must be short, as for ``withLock(_:)``.
    package func withLockWhenReady<Result>(_ body: (inout Value) -> Result?) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = body(&value.pointee) { return result }
            pthread_cond_wait(condition, mutex)
        }
    }

    /// As ``withLockWhenReady(_:)``, but gives up after `timeout`: `nil` if
    /// `body` had no result by then.
    package func withLockWhenReady<Result>(timeout: Duration, _ body: (inout Value) -> Result?) -> Result? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = max(timeout, .zero).components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(min(seconds, Int64(Int32.max))) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = body(&value.pointee) { return result }
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return body(&value.pointee) }
        }
    }

    /// Wakes one thread sleeping in ``withLockWhenReady(_:)`` (none if none sleeps).
    package func signalOne() { pthread_cond_signal(condition) }

    /// Wakes every thread sleeping in ``withLockWhenReady(_:)``.
    package func signalAll() { pthread_cond_broadcast(condition) }
}

/// `@unchecked`: every access to `value` happens inside `withLock`, with the
/// mutex held; values that cross threads must themselves be `Sendable`.
extension Locked: @unchecked Sendable where Value: Sendable {}
