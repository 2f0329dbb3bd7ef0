#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`.
///
/// Imago uses this rather than `Synchronization.Mutex`: on Linux, `Mutex`
/// waits on a priority-inheritance futex, and when it is contended the
/// kernel hands the lock to the next thread without any atomic operation in
/// user space, so ThreadSanitizer sees no ordering and reports false races
/// (reproduced: four threads appending to an array under a contended `Mutex`
/// gave 11 reports; the same program with a pthread mutex gave none). With a
/// pthread mutex the CI run under `--sanitize=thread` stays meaningful.
///
final class Locked<Value> {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held. Keep it short: no waiting, no user code.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// `@unchecked`: every access to `value` happens inside `withLock`, with the
/// mutex held; values that cross threads must themselves be `Sendable`.
extension Locked: @unchecked Sendable where Value: Sendable {}
