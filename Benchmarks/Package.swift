// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so that the library never depends on
// the benchmark harness. Run from this folder:
//
//     swift package --allow-writing-to-package-directory benchmark
//     swift run -c release HitRatio
//     swift run -c release PipelineThroughput
//     swift run -c release CacheValidation
//     swift run -c release DiskDurability [folder-parent] [stores] [rounds]
//     swift run -c release MemoryCacheSpeed [rounds]
//     swift run -c release Thumbnails [--memory]
//     swift run -c release ServeThroughput           # needs wrk (apt-get install -y wrk)
let package = Package(
    name: "ImagoBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Imago", path: ".."),
        // Only the MallocInterposer trait: the default traits also enable
        // RuntimeInterposer, which on Linux with Swift 6.3 needs the package
        // ordo-one/swift-runtime-interposer, and serves only the ARC metrics
        // (retain/release counts), which these benchmarks do not use.
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // The seeded workloads and measuring helpers shared by the benchmarks.
        .target(
            name: "CacheWorkloads",
            dependencies: [
                .product(name: "Imago", package: "Imago"),
                .product(name: "ImagoSandbox", package: "Imago"),
            ]
        ),
        .executableTarget(
            name: "ImagoBenchmarks",
            dependencies: [
                "CacheWorkloads",
                .product(name: "Imago", package: "Imago"),
                .product(name: "ImagoSandbox", package: "Imago"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ImagoBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
        // Prints the hit ratios of the eviction policies: a ratio, not a timing.
        .executableTarget(name: "HitRatio", dependencies: ["CacheWorkloads"]),
        // The CPU time of a bare download of thumbor-compare.sh's sources.
        .executableTarget(name: "BareFetch", dependencies: [.product(name: "AsyncHTTPClient", package: "async-http-client")]),
        // Prints cold-load and disk-hit throughput of the pipeline next to a
        // bare AsyncHTTPClient loop and direct decoding, in one run.
        .executableTarget(
            name: "PipelineThroughput",
            dependencies: [
                "CacheWorkloads",
                .product(name: "Imago", package: "Imago"),
                .product(name: "ImagoSandbox", package: "Imago"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // Prints the cost of HTTP cache validation: plain disk hits against
        // fresh HTTP hits, 304 revalidations and full downloads.
        .executableTarget(
            name: "CacheValidation",
            dependencies: [
                "CacheWorkloads",
                .product(name: "Imago", package: "Imago"),
                .product(name: "ImagoSandbox", package: "Imago"),
            ]
        ),
        // Prints the memory cache's time per operation next to a one-lock
        // CLOCK cache (ClockCache), in one run.
        .executableTarget(name: "MemoryCacheSpeed", dependencies: ["CacheWorkloads"]),
        // Prints the cost per store of each DiskCache durability (with and
        // without fsync); needs only the caches, so it builds in minutes.
        .executableTarget(
            name: "DiskDurability",
            dependencies: [.product(name: "ImagoCaching", package: "Imago")]
        ),
        // Prints what converting a profiled source to sRGB adds to a cold
        // answer's image work (decode, resample, encode), in one run.
        .executableTarget(
            name: "ColorCost",
            dependencies: ["CacheWorkloads", .product(name: "Imago", package: "Imago")]
        ),
        // Prints a 100-frame GIF resized by the pipeline next to gifsicle's
        // resize of it, in one run, for a source of one palette and one of a
        // palette a frame, with each one's peak memory, Imago's stages and
        // the outputs' quality.
        .executableTarget(
            name: "AnimationResize",
            dependencies: ["CacheWorkloads", .product(name: "Imago", package: "Imago"), .product(name: "ImagoCodecFixtures", package: "Imago")]
        ),
        // TurboJPEG called directly, for the ceiling the Thumbnails benchmark
        // compares against (the library's own CTurboJPEG module is no product).
        .systemLibrary(name: "CTurboJPEGDirect", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // Prints single-thread thumbnail rates (decode at 1/8, resample, JPEG
        // encode) with a stage breakdown next to bare TurboJPEG; with
        // --memory, the peak RSS of 1,000 thumbnails loaded through a pipeline.
        .executableTarget(
            name: "Thumbnails",
            dependencies: [
                "CacheWorkloads",
                "CTurboJPEGDirect",
                .product(name: "Imago", package: "Imago"),
            ]
        ),
        // Prints imago serve's thumbnail rate over HTTP on one core next to
        // the same transformation in a bare loop on that core, and its
        // result-cache hit rate and latency, in one run (the server in a child
        // process on core 0, wrk on core 1).
        .executableTarget(
            name: "ServeThroughput",
            dependencies: [
                "CacheWorkloads",
                .product(name: "Imago", package: "Imago"),
                .product(name: "ImagoServer", package: "Imago"),
                .product(name: "ImagoSandbox", package: "Imago"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
