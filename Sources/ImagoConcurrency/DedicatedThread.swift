import Foundation

/// Starts the few threads of their own that Imago runs: the pools' workers,
/// the memory-pressure watcher and the SVG renders (each on a thread whose
/// CPU time can be measured). Everything else runs on a pool or a task.
package enum DedicatedThread {
    /// Starts a detached thread named `name` (at most 15 bytes reach the
    /// kernel) that runs `body`, with `stackSize` bytes of stack if given.
    package static func start(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            // Set from the thread itself, so that it reaches the kernel (for
            // profilers and debuggers). Foundation passes the name on only
            // once `start()` has returned on the starting thread, and later
            // reads it back from the kernel: named directly too, or the
            // thread may keep the starting thread's name.
            #if canImport(Glibc)
                _ = setThreadName?(pthread_self(), String(name.utf8.prefix(15))!)
            #endif
            Thread.current.name = name
            body()
        }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }
}

#if canImport(Glibc)
    /// glibc's `pthread_setname_np`, which the Glibc module does not declare.
    private let setThreadName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np"
    )
    .map { unsafeBitCast($0, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self) }
#endif
