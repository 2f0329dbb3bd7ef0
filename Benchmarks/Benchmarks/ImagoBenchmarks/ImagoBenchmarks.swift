import Benchmark

// Entry point looked up by the code that BenchmarkPlugin generates.
let benchmarks: @Sendable () -> Void = {
    memoryCacheBenchmarks()
    diskCacheBenchmarks()
    diskCacheMaintenanceBenchmarks()
    pipelineBenchmarks()
}
