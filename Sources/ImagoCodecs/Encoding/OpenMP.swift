import Foundation

/// The OpenMP runtime that libimagequant is built with on Debian (libgomp).
enum OpenMP {
    /// Makes OpenMP regions that the calling thread starts from now on run on
    /// that thread alone. libgomp's idle worker threads spin after each
    /// region, which in a server burns a core for nothing, and requests run
    /// side by side already; the setting is the calling thread's own, so it
    /// is made before each use of libimagequant. Does nothing without OpenMP.
    static func runRegionsSerially() {
        setThreadCount?(1)
    }

    /// `omp_set_num_threads`, found where libimagequant loaded it; `nil`
    /// when nothing did.
    private static let setThreadCount: (@convention(c) (Int32) -> Void)? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "omp_set_num_threads"
    ).map { unsafeBitCast($0, to: (@convention(c) (Int32) -> Void).self) }
}
