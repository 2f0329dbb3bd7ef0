// swift-tools-version: 6.1
import PackageDescription

// IMAGO_WITHOUT_OTEL=1 leaves the OTLP trace exporter out of `imago`: the
// ThreadSanitizer build (scripts/test.sh) sets it, since with
// -sanitize=thread Swift 6.3 refuses to compile swift-otel 1.6.0 (a
// region-isolation error in its batch span processor). Spans are still
// made through swift-distributed-tracing; only the exporter is missing.
let exportsTraces = Context.environment["IMAGO_WITHOUT_OTEL"] == nil
let tracesExporter: [Target.Dependency] = exportsTraces ? [.product(name: "OTel", package: "swift-otel")] : []
let tracesSetting: [SwiftSetting] = exportsTraces ? [.define("IMAGO_OTEL")] : []

let package = Package(
    name: "Imago",
    // Linux only: the codecs are Debian's system libraries (apt providers
    // below), and only Linux is built and tested. No Apple platform is
    // declared; docs/LIBRARY.md says what an Apple app would need.
    products: [
        .library(name: "Imago", targets: ["Imago"]),
        // The memory and disk caches alone, without the network stack: builds
        // in about a minute (Imago re-exports it).
        .library(name: "ImagoCaching", targets: ["ImagoCaching"]),
        // The image type, codecs and resampling alone, without the pipeline's
        // network and cache stack (Imago re-exports it).
        .library(name: "ImagoCodecs", targets: ["ImagoCodecs"]),
        // What the demo, the tests and the benchmarks run against: an in-process
        // image server, a generated gallery, seeded traces.
        .library(name: "ImagoSandbox", targets: ["ImagoSandbox"]),
        // Test images made with the codecs' encoders, for the tests and the fuzzers' seeds.
        .library(name: "ImagoCodecFixtures", targets: ["ImagoCodecFixtures"]),
        // The image service behind `imago serve`: URL options, signing,
        // source policy. Depends on Imago; Imago never on it.
        .library(name: "ImagoServer", targets: ["ImagoServer"]),
        .executable(name: "imago", targets: ["ImagoCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // Already in the graph through AsyncHTTPClient: named for its
        // decompression limit type (gzip/deflate bodies, gzip-bomb guard).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Already in the graph through AsyncHTTPClient and Hummingbird: spans.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ]
        // The OTLP exporter behind `imago serve`'s traces; HTTP only, so
        // that gRPC's packages are not built.
        + (exportsTraces ? [.package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"])] : []),
    targets: [
        // Codecs from Debian's packages.
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CSpng", pkgConfig: "spng", providers: [.apt(["libspng-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        // No pkg-config for these two: giflib has none, and libavif's adds a -D
        // flag SwiftPM refuses; both headers are in /usr/include.
        .systemLibrary(name: "CGif", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CAvif", providers: [.apt(["libavif-dev"])]),
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CJxl", providers: [.apt(["libjxl-dev"])]),
        // Little CMS 2: colour profiles, for conversion to sRGB.
        .systemLibrary(name: "CLcms2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // libimagequant: the GIF encoder's palettes for images of more than 256 colours.
        .systemLibrary(name: "CImageQuant", pkgConfig: "imagequant", providers: [.apt(["libimagequant-dev"])]),
        .systemLibrary(name: "CTiff", pkgConfig: "libtiff-4", providers: [.apt(["libtiff-dev"])]),
        // librsvg and cairo: SVG sources rasterised. No pkg-config: GLib's
        // flags carry -pthread, which SwiftPM refuses (shim.h says more).
        .systemLibrary(name: "CRsvg", providers: [.apt(["librsvg2-dev"])]),
        // Locks, pools and semaphores: the one place where threads, mutexes
        // and condition variables are used directly.
        .target(name: "ImagoConcurrency"),
        .target(
            name: "ImagoCodecs",
            dependencies: [
                "ImagoConcurrency", "CTurboJPEG", "CSpng", "CWebP", "CGif", "CAvif", "CHeif", "CJxl", "CLcms2", "CImageQuant", "CTiff", "CRsvg",
            ]
        ),
        .target(name: "ImagoCodecFixtures", dependencies: ["ImagoCodecs", "CGif", "CAvif", "CHeif", "CWebP", "CJxl", "CLcms2", "CTiff"]),
        .target(
            name: "ImagoCaching",
            dependencies: [
                "ImagoConcurrency",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Imago",
            dependencies: [
                "ImagoConcurrency",
                "ImagoCodecs",
                "ImagoCaching",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "ImagoSandbox",
            dependencies: [
                "Imago",
                "ImagoConcurrency",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "ImagoCLI",
            dependencies: [
                "Imago",
                "ImagoConcurrency",
                "ImagoSandbox",
                "ImagoServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ] + tracesExporter,
            swiftSettings: tracesSetting
        ),
        .target(
            name: "ImagoServer",
            dependencies: [
                "Imago",
                "ImagoConcurrency",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // An app of its own that mounts the image service's routes at
        // /images (built by the test command, driven over HTTP by a test).
        .executableTarget(
            name: "ImageHost",
            dependencies: ["ImagoServer", .product(name: "Hummingbird", package: "hummingbird")],
            path: "Examples/ImageHost"
        ),
        // Child process for the crash-consistency tests: stores entries until it is killed.
        .executableTarget(name: "ImagoCacheTorture", dependencies: ["Imago", "ImagoSandbox"]),
        .testTarget(
            name: "ImagoTests",
            // CTurboJPEG, CAvif, CLcms2, CTiff: tests compare the decoders with
            // the libraries' own behaviour (TurboJPEG's decoding, libavif's
            // strict checks and 16-bit output, lcms's conversions and ΔE2000,
            // libtiff's compressions and photometric interpretations); CJxl:
            // libjxl's decoder reads back the JPEG XL encoder's ICC profile.
            dependencies: [
                "Imago", "ImagoCodecs", "ImagoCaching", "ImagoConcurrency", "ImagoCodecFixtures", "ImagoSandbox", "ImagoCacheTorture", "CTurboJPEG",
                "CAvif", "CLcms2",
                "CJxl", "CTiff",
            ]
        ),
        .testTarget(
            name: "ImagoServerTests",
            dependencies: [
                // ImageHost and ImagoCLI (the imago command): run as processes by the tests.
                "ImagoServer", "ImagoConcurrency", "ImagoSandbox", "ImagoCodecFixtures", "ImageHost", "ImagoCLI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Origins/aws-sig-v4-test-suite")],
            swiftSettings: tracesSetting
        ),
    ],
    swiftLanguageModes: [.v6]
)
