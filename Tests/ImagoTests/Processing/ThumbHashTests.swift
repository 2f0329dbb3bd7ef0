import Foundation
import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("ThumbHash: the reference's bytes, and what a decoder rebuilds from them")
struct ThumbHashTests {
    /// An image whose pixel (x, y) is `pixel(x, y)`: rgb8 for three values, rgba8 for four.
    static func image(_ width: Int, _ height: Int, _ pixel: (Int, Int) -> [Int]) -> Image {
        let channels = pixel(0, 0).count
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * channels)
        for y in 0..<height {
            for x in 0..<width { pixels.append(contentsOf: pixel(x, y).map { UInt8($0) }) }
        }
        return Image(width: width, height: height, pixelFormat: channels == 4 ? .rgba8 : .rgb8, pixels: pixels)!
    }

    /// The alpha of a preview's pixel.
    static func alpha(_ image: Image, _ x: Int, _ y: Int) -> UInt8 { image.pixels[(y * image.width + x) * 4 + 3] }

    // The expected bytes come from the PyPI package `thumbhash` 0.1.2, a Python port of Evan Wallace's
    // reference encoder, with this script:
    //
    //     # python3 -m venv /tmp/v && /tmp/v/bin/pip install thumbhash==0.1.2 && /tmp/v/bin/python vectors.py
    //     import inspect
    //     import thumbhash
    //     # The port's encoder fails on alpha (`... if has_alpha else 1.0, [], 1.0` unpacks a tuple into a_dc);
    //     # the same function with that line parenthesised, as the reference has it, gives the alpha vector.
    //     source = inspect.getsource(thumbhash.rgba_to_thumb_hash).replace(
    //         "if has_alpha else 1.0, [], 1.0", "if has_alpha else (1.0, [], 1.0)")
    //     namespace = {"math": thumbhash.math, "List": thumbhash.List}
    //     exec(source, namespace)
    //     encode = namespace["rgba_to_thumb_hash"]
    //     def image(w, h, pixel):
    //         return [v for y in range(h) for x in range(w) for v in pixel(x, y)]
    //     cases = {
    //         "solid 16x12 (200, 120, 40)": (16, 12, lambda x, y: (200, 120, 40, 255)),
    //         "gradient 32x20": (32, 20, lambda x, y: (x * 8, y * 12, 128, 255)),
    //         "pattern 20x30": (20, 30, lambda x, y: ((x * y) % 256, (x * 13 + y * 7) % 256, 255 - y * 8, 255)),
    //         "alpha 24x24": (24, 24, lambda x, y: (255, 60, 20, 0 if x < 8 else min(255, y * 11))),
    //     }
    //     for name, (w, h, pixel) in cases.items():
    //         hash = encode(w, h, image(w, h, pixel))
    //         if not name.startswith("alpha"):
    //             assert hash == thumbhash.rgba_to_thumb_hash(w, h, image(w, h, pixel))
    //         print(name, "[" + ", ".join("0x%02X" % b for b in hash) + "]")
    //
    // The solid colour's nibbles are its terms' rounding noise divided by their largest: the same only
    // if every double is computed in the reference's order, as the encoder does.
    @Test("hashes are byte for byte the reference's (solid, gradient, portrait pattern, alpha)")
    func knownAnswers() {
        let cases: [(name: String, image: Image, expected: [UInt8])] = [
            (
                "solid 16x12", Self.image(16, 12) { _, _ in [200, 120, 40] },
                [0x9E, 0x9B, 0x02, 0x05, 0x80, 0x68, 0x6A, 0x2B, 0x87, 0x87, 0x87, 0x80, 0x87, 0xC8, 0x88, 0x7C, 0x69, 0x87, 0xF0, 0x84, 0x78]
            ),
            (
                "gradient 32x20", Self.image(32, 20) { x, y in [x * 8, y * 12, 128] },
                [0x9E, 0x17, 0x0A, 0x34, 0x9A, 0x70, 0x77, 0x87, 0x70, 0x88, 0x88, 0x87, 0x87, 0x77, 0x70, 0x80, 0x07, 0xF7, 0x88]
            ),
            (
                "pattern 20x30", Self.image(20, 30) { x, y in [(x * y) % 256, (x * 13 + y * 7) % 256, 255 - y * 8] },
                [0x1D, 0xB7, 0x05, 0x7D, 0x0E, 0x23, 0x64, 0x3F, 0xB5, 0x47, 0xC6, 0x77, 0x79, 0x78, 0x88, 0x77, 0x66, 0x70, 0x07, 0x26, 0x4B]
            ),
            (
                "alpha 24x24", Self.image(24, 24) { x, y in [255, 60, 20, x < 8 ? 0 : min(255, y * 11)] },
                [
                    0x1C, 0x8C, 0x83, 0x05, 0x00, 0x25, 0x2F, 0x2E, 0x87, 0x87, 0x78, 0x77, 0x68, 0x78, 0x8F, 0xB7, 0x60, 0x77, 0x40, 0x98, 0xB0,
                    0x79, 0x87, 0x78, 0x78,
                ]
            ),
        ]
        for (name, image, expected) in cases {
            // Given one of the script's images, when it is hashed, then the bytes are the script's
            #expect(ThumbHash.hash(of: image) == expected, "\(name)")
        }
        // And base64 is their standard encoding, padded
        #expect(ThumbHash.base64(of: cases[1].image) == "nhcKNJpwd4dwiIiHh3dwgAf3iA==")
    }

    @Test("a solid colour's hash averages to the colour, within the format's quantisation")
    func solidColor() throws {
        // The constant terms have 6 bits: L in steps of 1/63, P and Q in steps of 1/31.5, so red and
        // green (L + P/3 +- Q/2) are off by at most 1/126 + 1/189 + 1/126 = 0.0212 and blue
        // (L - 2P/3) by 1/126 + 1/94.5 = 0.0185: about 5 levels of 255. Alpha has 4 bits: 1/30.
        let tolerance = 0.0213
        var generator = SeededGenerator(seed: 5)
        var colors: [[Int]] = [[0, 0, 0], [255, 255, 255], [128, 128, 128], [255, 0, 0], [0, 255, 0], [0, 0, 255], [224, 172, 138]]
        for _ in 0..<20 { colors.append((0..<3).map { _ in Int.random(in: 0...255, using: &generator) }) }
        for color in colors {
            // Given a solid image of the colour
            let image = Self.image(13, 9) { _, _ in color }

            // When its hash's average colour is read
            let average = try #require(ThumbHash.averageColor(of: ThumbHash.hash(of: image)))

            // Then it is the colour, and opaque
            #expect(abs(average.red - Double(color[0]) / 255) <= tolerance, "\(color): \(average)")
            #expect(abs(average.green - Double(color[1]) / 255) <= tolerance, "\(color): \(average)")
            #expect(abs(average.blue - Double(color[2]) / 255) <= tolerance, "\(color): \(average)")
            #expect(average.alpha == 1)
        }
        // And a half-transparent solid colour keeps its alpha within 1/30
        let translucent = try #require(ThumbHash.averageColor(of: ThumbHash.hash(of: Self.image(8, 8) { _, _ in [40, 90, 200, 128] })))
        #expect(abs(translucent.alpha - 128.0 / 255) <= 1.0 / 30 + 1e-9)
        #expect(abs(translucent.blue - 200.0 / 255) <= tolerance)
    }

    @Test("the aspect ratio of wide, tall and square images is kept to within a step of sevenths")
    func aspectRatio() throws {
        for (width, height) in [(100, 100), (100, 50), (50, 100), (100, 75), (75, 100), (400, 100), (100, 400), (30, 20), (640, 360), (7, 49)] {
            // Given an image of that shape (larger ones are reduced to fit 100x100 first)
            let image = Self.image(width, height) { x, y in [x % 256, y % 256, 100] }

            // When its hash is read back
            let hash = ThumbHash.hash(of: image)
            let ratio = try #require(ThumbHash.approximateAspectRatio(of: hash))
            let preview = try #require(ThumbHash.image(from: hash))

            // Then the shorter side's share of the longer is right to within half a seventh, the
            // orientation is kept, and the preview's longer side is 32 pixels.
            let actual = Double(width) / Double(height)
            let share = min(ratio, 1 / ratio)
            #expect(abs(share - min(actual, 1 / actual)) <= 0.5 / 7 + 1e-9, "\(width)x\(height): \(ratio)")
            #expect((ratio > 1) == (width > height) && (ratio < 1) == (width < height), "\(width)x\(height): \(ratio)")
            #expect(max(preview.width, preview.height) == 32)
            #expect((preview.width > preview.height) == (width > height))
        }
    }

    @Test("alpha sets the hash's alpha flag, and a transparent region shows in the preview")
    func alpha() throws {
        // Given an image whose left half is transparent and right half opaque green
        let image = Self.image(60, 40) { x, _ in x < 30 ? [0, 0, 0, 0] : [30, 200, 60, 255] }

        // When it is hashed and decoded
        let hash = ThumbHash.hash(of: image)
        let preview = try #require(ThumbHash.image(from: hash))

        // Then the alpha flag (bit 23) is set, the average alpha is about a half, the preview is
        // transparent on the left and opaque on the right
        #expect(hash[2] & 0x80 != 0)
        let average = try #require(ThumbHash.averageColor(of: hash))
        #expect(abs(average.alpha - 0.5) <= 1.0 / 30)
        #expect(preview.pixelFormat == .rgba8)
        let middle = preview.height / 2
        #expect(Self.alpha(preview, 1, middle) < 40, "\(Self.alpha(preview, 1, middle))")
        #expect(Self.alpha(preview, preview.width - 2, middle) > 215, "\(Self.alpha(preview, preview.width - 2, middle))")

        // And an rgba8 image that is opaque everywhere has no alpha flag, and an opaque preview
        let opaque = ThumbHash.hash(of: Self.image(20, 20) { x, y in [x * 10, y * 10, 50, 255] })
        #expect(opaque[2] & 0x80 == 0)
        #expect(try #require(ThumbHash.image(from: opaque)).pixels.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
    }

    @Test("the preview of an image red on the left and blue on the right is reddish left, bluish right")
    func twoColors() throws {
        // Given an image, left half red, right half blue
        let image = Self.image(80, 60) { x, _ in x < 40 ? [255, 0, 0] : [0, 0, 255] }

        // When its hash is decoded
        let preview = try #require(ThumbHash.image(from: ThumbHash.hash(of: image)))

        // Then the left quarter is red over blue, the right quarter blue over red
        for y in [2, preview.height / 2, preview.height - 3] {
            let left = (y * preview.width + 3) * 4
            let right = (y * preview.width + preview.width - 4) * 4
            #expect(preview.pixels[left] > preview.pixels[left + 2] + 60, "left at \(y): \(preview.pixels[left..<(left + 4)])")
            #expect(preview.pixels[right + 2] > preview.pixels[right] + 60, "right at \(y): \(preview.pixels[right..<(right + 4)])")
        }
    }

    @Test("gray formats hash as their colour equivalents; a large image is reduced to fit 100x100 first")
    func formatsAndSizes() {
        // Given gray and gray-with-alpha images and their rgba8 equivalents
        let gray = Image(width: 10, height: 6, pixelFormat: .gray8, pixels: (0..<60).map { UInt8($0 * 4) })!
        let grayAsColor = Self.image(10, 6) { x, y in [(y * 10 + x) * 4, (y * 10 + x) * 4, (y * 10 + x) * 4] }
        let grayAlpha = Image(width: 10, height: 6, pixelFormat: .grayAlpha8, pixels: (0..<120).map { UInt8($0 % 2 == 0 ? $0 : 255 - $0) })!
        let grayAlphaAsColor = Self.image(10, 6) { x, y in
            let index = (y * 10 + x) * 2
            return [index, index, index, 255 - (index + 1)]
        }

        // Then they hash alike
        #expect(ThumbHash.hash(of: gray) == ThumbHash.hash(of: grayAsColor))
        #expect(ThumbHash.hash(of: grayAlpha) == ThumbHash.hash(of: grayAlphaAsColor))

        // And a 400x300 image hashes as its reduction to 100x75 does; a 1x1 image hashes too
        let large = Self.image(400, 300) { x, y in [x % 256, y % 256, (x + y) % 256] }
        let reduced = ImageResizer.resize(large, to: ImageSize(width: 100, height: 75))!
        #expect(ThumbHash.hash(of: large) == ThumbHash.hash(of: reduced))
        #expect(ThumbHash.image(from: ThumbHash.hash(of: Self.image(1, 1) { _, _ in [9, 8, 7] })) != nil)
    }

    @Test("bytes that are not a ThumbHash give nil, and random bytes never trap")
    func badBytes() throws {
        let good = ThumbHash.hash(of: Self.image(30, 20) { x, y in [x * 8, y * 12, 90] })
        var badSide = good
        badSide[3] &= ~7  // no luminance terms along the shorter side
        for bad in [[], [UInt8](good.prefix(4)), Array(good.dropLast()), good + [0], badSide] {
            #expect(ThumbHash.image(from: bad) == nil, "\(bad)")
            #expect(ThumbHash.averageColor(of: bad) == nil, "\(bad)")
            #expect(ThumbHash.approximateAspectRatio(of: bad) == nil, "\(bad)")
        }
        // An alpha flag with no room for the alpha byte
        #expect(ThumbHash.image(from: [0, 0, 0x80, 0x05, 0x00]) == nil)

        var generator = SeededGenerator(seed: 17)
        var decoded = 0
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if let preview = ThumbHash.image(from: bytes) {
                decoded += 1
                #expect(max(preview.width, preview.height) == 32)
                let ratio = try #require(ThumbHash.approximateAspectRatio(of: bytes))
                #expect(ratio >= 1.0 / 7 && ratio <= 7)
            }
        }
        #expect(decoded > 0, "some random bytes have a ThumbHash's length and header")
    }
}
