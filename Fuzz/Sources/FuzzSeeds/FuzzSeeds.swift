import CGif
import CTiff
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
            ("tiff", try tiffSeeds(rgb: rgb, rgba: rgba, gray: gray, metadata: metadata)),
            ("bmp", try bmpSeeds(rgb: rgb, rgba: rgba, metadata: metadata)),
            ("ico", try icoSeeds(rgb: rgb, rgba: rgba)),
            ("svg", try svgSeeds(rgba: rgba)),
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

    /// TIFFs written by libtiff: each compression, 16 bits, a palette, 1 bit,
    /// planes, tiles, associated alpha, several pages, an orientation and
    /// metadata tags, big-endian; and a hand-made one with an EXIF directory.
    static func tiffSeeds(rgb: Image, rgba: Image, gray: Image, metadata: ImageMetadata) throws -> [(String, Data)] {
        typealias Page = FormatFixtures.TIFFPage
        func page(_ image: Image, _ change: (inout Page) -> Void = { _ in }) -> Page {
            var page = Page(image)
            change(&page)
            return page
        }
        let sixteen = page(gray) { page in
            page.bitsPerSample = 16
            page.samples = gray.pixels.flatMap { value in withUnsafeBytes(of: UInt16(value) * 257) { Array($0) } }
        }
        // 4-bit palette: 8x4 indices, two a byte.
        var palette = Page(
            width: 8, height: 4, samples: (0..<16).map { UInt8($0 * 17 % 256) }, bitsPerSample: 4, samplesPerPixel: 1,
            photometric: PHOTOMETRIC_PALETTE)
        palette.colormap = (0..<48).map { UInt16($0 * 1365 % 65536) }
        palette.compression = COMPRESSION_PACKBITS
        var bilevel = Page(
            width: 16, height: 4, samples: [0xF0, 0x0F, 0xAA, 0x55, 0xFF, 0x00, 0x81, 0x18], bitsPerSample: 1, samplesPerPixel: 1,
            photometric: PHOTOMETRIC_MINISWHITE)
        bilevel.compression = COMPRESSION_CCITTFAX4
        var seeds: [(String, Data)] = [
            ("rgb-lzw.tif", try FormatFixtures.tiff([page(rgb) { $0.compression = COMPRESSION_LZW }])),
            (
                "rgba-deflate-predictor.tif",
                try FormatFixtures.tiff([
                    page(rgba) {
                        $0.compression = COMPRESSION_ADOBE_DEFLATE
                        $0.predictor = PREDICTOR_HORIZONTAL
                    }
                ])
            ),
            ("gray16.tif", try FormatFixtures.tiff([sixteen])),
            ("palette4-packbits.tif", try FormatFixtures.tiff([palette])),
            ("bilevel-fax4.tif", try FormatFixtures.tiff([bilevel])),
            ("planes.tif", try FormatFixtures.tiff([page(rgba) { $0.separatePlanes = true }])),
            ("tiles.tif", try FormatFixtures.tiff([page(rgb) { $0.tileSize = 16 }])),
            ("associated-alpha.tif", try FormatFixtures.tiff([Page(rgba, associatedAlpha: true)])),
            ("pages.tif", try FormatFixtures.tiff([Page(rgb), Page(gray), Page(rgba)])),
            (
                "turned-metadata-big-endian.tif",
                try FormatFixtures.tiff(
                    [
                        page(rgb) { page in
                            page.orientation = 6
                            page.iccProfile = metadata.iccProfile
                            page.xmp = metadata.xmp
                        }
                    ], bigEndian: true)
            ),
            (
                "exif-by-hand.tif",
                FormatFixtures.handMadeTIFF(
                    width: 2, height: 2, pixels: Array(rgb.pixels.prefix(12)),
                    fields: [.short(0x0112, 3), .ascii(0x013B, "Ann"), .undefined(0x8649, metadata.iptc ?? Data())],
                    exifFields: [.ascii(0x9003, "2026:11:26 10:00:00"), .short(0xA001, 1)])
            ),
        ]
        if TIFFIsCODECConfigured(UInt16(COMPRESSION_JPEG)) == 1 {
            seeds.append(
                (
                    "jpeg.tif",
                    try FormatFixtures.tiff([
                        page(rgb) {
                            $0.compression = COMPRESSION_JPEG
                            $0.rowsPerStrip = 16
                        }
                    ])
                ))
        }
        return seeds
    }

    /// BMPs of every header, bit count and compression the decoder reads.
    static func bmpSeeds(rgb: Image, rgba: Image, metadata: ImageMetadata) throws -> [(String, Data)] {
        typealias Header = FormatFixtures.BitmapHeader
        let palette: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]
        let indices = (0..<6).map { y in (0..<9).map { x in (x + y) % 4 } }
        func rows(_ bits: Int) -> [UInt8] { FormatFixtures.bitmapRows(indices, bitCount: bits) }
        return [
            ("rgb24.bmp", FormatFixtures.bmp(rgb)),
            ("rgb24-top-down.bmp", FormatFixtures.bmp(rgb, topDown: true)),
            ("rgba32-v5.bmp", FormatFixtures.bmp(rgba)),
            ("rgba32-info.bmp", FormatFixtures.bmp(rgba, v5: false)),
            (
                "palette1.bmp",
                FormatFixtures.bmp(
                    Header(width: 9, height: 6, bitCount: 1, palette: Array(palette.prefix(2)), colorsUsed: 2),
                    pixelData: FormatFixtures.bitmapRows(indices.map { $0.map { $0 % 2 } }, bitCount: 1))
            ),
            (
                "palette4-core.bmp",
                FormatFixtures.bmp(
                    Header(size: 12, width: 9, height: 6, bitCount: 4, palette: palette + [[UInt8]](repeating: [0, 0, 0], count: 12)),
                    pixelData: rows(4))
            ),
            (
                "palette8-v4.bmp",
                FormatFixtures.bmp(Header(size: 108, width: 9, height: 6, bitCount: 8, palette: palette, colorsUsed: 4), pixelData: rows(8))
            ),
            (
                "rgb565.bmp",
                FormatFixtures.bmp(
                    Header(width: 9, height: 6, bitCount: 16, compression: 3, masks: [0xF800, 0x07E0, 0x001F]),
                    pixelData: FormatFixtures.bitmapRows(indices.map { $0.map { $0 * 0x1234 } }, bitCount: 16))
            ),
            (
                "argb4444-v4.bmp",
                FormatFixtures.bmp(
                    Header(size: 108, width: 9, height: 6, bitCount: 16, compression: 3, masks: [0x0F00, 0x00F0, 0x000F, 0xF000]),
                    pixelData: FormatFixtures.bitmapRows(indices.map { $0.map { $0 * 0x3C4B } }, bitCount: 16))
            ),
            (
                "rle8.bmp",
                FormatFixtures.bmp(
                    Header(width: 6, height: 3, bitCount: 8, compression: 1, palette: palette, colorsUsed: 4),
                    pixelData: [3, 1, 0, 3, 2, 3, 0, 0, 0, 0, 0, 2, 2, 1, 2, 2, 0, 1])
            ),
            (
                "rle4.bmp",
                FormatFixtures.bmp(
                    Header(width: 8, height: 2, bitCount: 4, compression: 2, palette: palette, colorsUsed: 4),
                    pixelData: [5, 0x12, 0, 3, 0x30, 0x10, 0, 0, 0, 1])
            ),
            (
                "profile-v5.bmp",
                FormatFixtures.bmp(
                    Header(size: 124, width: 9, height: 6, bitCount: 24, profile: metadata.iccProfile),
                    pixelData: FormatFixtures.bitmapRows(indices.map { $0.map { $0 * 0x40_3010 } }, bitCount: 24))
            ),
        ]
    }

    /// Icons and a cursor: bitmap entries of 32, 24 and 8 bits with masks, a PNG entry, several sizes.
    static func icoSeeds(rgb: Image, rgba: Image) throws -> [(String, Data)] {
        let small = FormatFixtures.quadrants(width: 8, height: 8, alpha: true)
        let mask = { (x: Int, y: Int) in x == y }
        let palette = FormatFixtures.IconImage.bitmap(
            FormatFixtures.BitmapHeader(width: 8, height: 2, bitCount: 8, palette: [[255, 0, 0], [0, 0, 255]], colorsUsed: 2),
            pixelData: FormatFixtures.bitmapRows([[0, 1, 0, 1, 0, 1, 0, 1], [1, 1, 0, 0, 1, 1, 0, 0]], bitCount: 8),
            maskData: FormatFixtures.bitmapRows([[1, 0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 1, 1, 0, 0, 0]], bitCount: 1))
        return [
            ("bitmap32.ico", FormatFixtures.ico([(FormatFixtures.iconBitmap(rgba), 16, 12, 32)])),
            ("bitmap24-mask.ico", FormatFixtures.ico([(FormatFixtures.iconBitmap(rgb, transparent: mask), 16, 12, 24)])),
            ("palette8.ico", FormatFixtures.ico([(palette, 8, 2, 8)])),
            ("png.ico", FormatFixtures.ico([(.png(try PNGEncoder().encode(rgba)), 16, 12, 32)])),
            (
                "sizes.ico",
                FormatFixtures.ico([
                    (FormatFixtures.iconBitmap(small), 8, 8, 32), (FormatFixtures.iconBitmap(rgb, transparent: mask), 16, 12, 24),
                    (.png(try PNGEncoder().encode(rgba)), 16, 12, 32),
                ])
            ),
            ("cursor.cur", FormatFixtures.ico([(FormatFixtures.iconBitmap(small), 8, 8, 32)], cursor: true)),
        ]
    }
}
