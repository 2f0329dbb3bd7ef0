// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for the decoders, one per format (SVG's fuzzes its
// sanitiser too), and the generator of their seed corpus. Its own package,
// depending on the codecs alone, so that fuzzing never builds the
// pipeline's network stack. scripts/fuzz.sh builds and runs it; see README.md.
let formats = ["JPEG", "PNG", "WebP", "GIF", "AVIF", "HEIC", "JXL", "TIFF", "BMP", "ICO", "SVG"]

let package = Package(
    name: "ImagoFuzz",
    platforms: [.macOS(.v15)],
    products: formats.map { .executable(name: "fuzz-\($0.lowercased())", targets: ["Fuzz\($0)"]) } + [
        .executable(name: "fuzz-seeds", targets: ["FuzzSeeds"])
    ],
    dependencies: [
        .package(name: "Imago", path: "..")
    ],
    targets: formats.map {
        .executableTarget(name: "Fuzz\($0)", dependencies: ["DecoderFuzzing", .product(name: "ImagoCodecs", package: "Imago")])
    } + [
        // What every fuzz target does with an input; the targets only pick the decoder.
        .target(name: "DecoderFuzzing", dependencies: ["CLibFuzzer", .product(name: "ImagoCodecs", package: "Imago")]),
        .systemLibrary(name: "CLibFuzzer"),
        // Built without the fuzzer sanitizer (libFuzzer brings its own main).
        .executableTarget(
            name: "FuzzSeeds",
            dependencies: [
                .product(name: "ImagoCodecs", package: "Imago"),
                .product(name: "ImagoCodecFixtures", package: "Imago"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
