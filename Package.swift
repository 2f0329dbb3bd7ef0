// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Imago",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Imago", targets: ["Imago"]),
        // Seeded traces and an in-process server, shared by the tests and the benchmarks.
        .library(name: "ImagoTestSupport", targets: ["ImagoTestSupport"]),
        .executable(name: "imago", targets: ["ImagoCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "Imago",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "ImagoTestSupport", dependencies: ["Imago"]),
        .executableTarget(
            name: "ImagoCLI",
            dependencies: [
                "Imago",
                "ImagoTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Child process for the crash-consistency tests: stores entries until it is killed.
        .executableTarget(name: "ImagoCacheTorture", dependencies: ["Imago", "ImagoTestSupport"]),
        .testTarget(name: "ImagoTests", dependencies: ["Imago", "ImagoTestSupport", "ImagoCacheTorture"]),
    ],
    swiftLanguageModes: [.v6]
)
