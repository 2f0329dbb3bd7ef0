import CGif
import Foundation
import ImagoCodecFixtures
import ImagoCodecs

/// Writes the fuzzers' seed corpus: a handful of small valid images per
/// format, made with the library's and the codecs' encoders (so no binary
/// file is committed), into `<directory>/<format>/`.
///
///     fuzz-seeds Fuzz/.build/corpus
@main
struct FuzzSeeds {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: fuzz-seeds <corpus directory>\n".utf8))
            exit(2)
        }
        let root = URL(fileURLWithPath: arguments[1])
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-seeds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (format, seeds) in try makeSeeds(scratch: scratch) {
            let folder = root.appendingPathComponent(format)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, data) in seeds {
                try data.write(to: folder.appendingPathComponent(name))
            }
            print("\(format): \(seeds.count) seeds, \(seeds.map(\.1.count).reduce(0, +)) bytes")
        }
    }

    /// Small images, so that each run is fast, covering the pixel formats,
    /// alpha, interlacing and animation each format has.
    static func makeSeeds(scratch: URL) throws -> [(String, [(String, Data)])] {
        let rgb = FormatFixtures.quadrants(width: 16, height: 12)
        let rgba = FormatFixtures.quadrants(width: 16, height: 12, alpha: true)
        let gray = Image(width: 9, height: 7, pixelFormat: .gray8, pixels: (0..<63).map { UInt8($0 * 4) })!
        let grayAlpha = Image(width: 5, height: 3, pixelFormat: .grayAlpha8, pixels: (0..<30).map { UInt8($0 * 8) })!
        // Three RGBA frames: the quadrants rotated by 0, 5 and 10 pixels.
        let frames = (0..<3).map { index in
            let offset = index * 5 * 4
            return Image(width: 16, height: 12, pixelFormat: .rgba8, pixels: Array(rgba.pixels[offset...] + rgba.pixels[..<offset]))!
        }
        let palette: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)]
        func gifFrame(_ index: UInt8, left: Int = 0, top: Int = 0, width: Int = 8, height: Int = 8) -> FormatFixtures.GIFFrame {
            FormatFixtures.GIFFrame(left: left, top: top, width: width, height: height, indices: [UInt8](repeating: index, count: width * height))
        }
        var disposed = gifFrame(2, left: 2, top: 2, width: 4, height: 4)
        disposed.disposal = Int32(DISPOSE_BACKGROUND)
        var restored = gifFrame(3, left: 1, top: 1, width: 3, height: 3)
        restored.disposal = Int32(DISPOSE_PREVIOUS)
        restored.transparentIndex = 0
        var interlaced = FormatFixtures.GIFFrame(width: 8, height: 10, indices: (0..<80).map { UInt8($0 % 4) })
        interlaced.interlaced = true
        // Every metadata block, for the metadata reader.
        let metadata = ImageMetadata(
            exif: MetadataFixtures.exif(orientation: 6, fields: [0x013B: "Ann", 0x8298: "(c) Ann"], bigEndian: false),
            xmp: MetadataFixtures.xmp(creator: "Ann"),
            iptc: MetadataFixtures.photoshopResources(iptc: [(1, 90, "\u{1B}%G"), (2, 116, "(c) Ann")]),
            iccProfile: MetadataFixtures.iccProfile(size: 300)
        )
        // A real profile, for the colour conversion's paths.
        let displayP3 = ImageMetadata(iccProfile: MetadataFixtures.displayP3Profile())

        return [
            (
                "jpeg",
                [
                    ("rgb.jpg", try JPEGEncoder(quality: 90).encode(rgb)),
                    ("alpha-over-white.jpg", try JPEGEncoder(quality: 30).encode(rgba)),
                    ("gray.jpg", try JPEGEncoder().encode(gray)),
                    ("metadata.jpg", try JPEGEncoder(metadata: metadata).encode(rgb)),
                    ("display-p3.jpg", try JPEGEncoder(metadata: displayP3).encode(rgb)),
                    ("display-p3-gray.jpg", try JPEGEncoder(metadata: displayP3).encode(gray)),
                ]
            ),
            (
                "png",
                [
                    ("rgb.png", try PNGEncoder().encode(rgb)),
                    ("rgba.png", try PNGEncoder().encode(rgba)),
                    ("gray.png", try PNGEncoder().encode(gray)),
                    ("gray-alpha.png", try PNGEncoder().encode(grayAlpha)),
                    ("metadata.png", try PNGEncoder(metadata: metadata).encode(rgb)),
                    ("display-p3-alpha.png", try PNGEncoder(metadata: displayP3).encode(rgba)),
                ]
            ),
            (
                "webp",
                [
                    ("lossy.webp", try WebPEncoder(quality: 50).encode(rgb)),
                    ("lossy-alpha.webp", try WebPEncoder(quality: 50).encode(rgba)),
                    ("lossless-alpha.webp", try WebPEncoder(lossless: true).encode(rgba)),
                    ("animated.webp", try FormatFixtures.animatedWebP(frames, durationMS: 50, loopCount: 2)),
                    ("metadata.webp", try WebPEncoder(quality: 50, metadata: metadata).encode(rgb)),
                    ("display-p3.webp", try WebPEncoder(quality: 50, metadata: displayP3).encode(rgba)),
                ]
            ),
            (
                "gif",
                [
                    ("still.gif", try FormatFixtures.gif(width: 8, height: 8, palette: palette, frames: [gifFrame(1)])),
                    ("interlaced.gif", try FormatFixtures.gif(width: 8, height: 10, palette: palette, frames: [interlaced])),
                    (
                        "animated.gif",
                        try FormatFixtures.gif(
                            width: 8, height: 8, palette: palette,
                            frames: [gifFrame(1), disposed, restored, gifFrame(2, left: 6, top: 5, width: 4, height: 4)], loopCount: 0
                        )
                    ),
                ]
            ),
            (
                "avif",
                [
                    ("rgb.avif", try FormatFixtures.avif([rgb])),
                    ("alpha.avif", try FormatFixtures.avif([rgba])),
                    ("sequence.avif", try FormatFixtures.avif(frames, durationSeconds: 0.05)),
                    ("metadata.avif", try AVIFEncoder(speed: 10, metadata: metadata).encode(rgb)),
                    ("display-p3-10-bit.avif", try FormatFixtures.avif([rgb], cicp: (12, 13), depth: 10)),
                ]
            ),
            (
                "heic",
                [
                    ("rgb.heic", try FormatFixtures.heic(rgb, directory: scratch)),
                    ("larger.heic", try FormatFixtures.heic(FormatFixtures.quadrants(width: 40, height: 24), directory: scratch)),
                    (
                        "thumbnail-metadata.heic",
                        try FormatFixtures.heic(
                            FormatFixtures.quadrants(width: 40, height: 24), directory: scratch, thumbnailBox: 10, exif: metadata.exif,
                            xmp: metadata.xmp, iccProfile: metadata.iccProfile
                        )
                    ),
                ]
            ),
            (
                "jxl",
                [
                    ("rgb.jxl", try FormatFixtures.jxl(rgb)),
                    ("alpha.jxl", try FormatFixtures.jxl(rgba, container: true)),
                    ("gray-turned.jxl", try FormatFixtures.jxl(gray, orientation: 6)),
                ]
            ),
        ]
    }
}
