import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("Layout processors: colour, embed, flatten, rotate, flip, pixelate; exact pixels, stable identifiers")
struct LayoutProcessorsTests {
    typealias P = PixelFixtures

    // MARK: Color

    @Test("a colour prints as lowercase #rrggbb, with alpha appended only when not opaque")
    func colorDescription() {
        #expect(Color(red: 255, green: 136, blue: 0).description == "#ff8800")
        #expect(Color(red: 255, green: 136, blue: 0, alpha: 128).description == "#ff880080")
        #expect(Color.white.description == "#ffffff")
        #expect(Color.black.description == "#000000")
        #expect(Color.transparent == Color(red: 0, green: 0, blue: 0, alpha: 0))
        #expect(Color.transparent.description == "#00000000")
        #expect(Color(red: 1, green: 2, blue: 3).isGray == false)
        #expect(Color(red: 7, green: 7, blue: 7, alpha: 3).isGray)
    }

    // MARK: Embed

    @Test("embed places the image at its offset on a canvas of the background; the rest is background")
    func embedPlacement() throws {
        // Given a 2x2 RGB image with four distinct pixels
        let image = P.image(2, 2, .rgb8, [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]])
        // When it is embedded at (1, 1) on a 4x3 white canvas
        let embedded = try #require(ImageProcessors.Embed(size: ImageSize(width: 4, height: 3), x: 1, y: 1, background: .white).process(image))
        // Then the canvas is white around it, and the format stays RGB (white is opaque)
        let w: [UInt8] = [255, 255, 255]
        #expect(embedded.pixelFormat == .rgb8)
        #expect(embedded.size == ImageSize(width: 4, height: 3))
        #expect(P.pixels(embedded) == [w, w, w, w, w, [1, 2, 3], [4, 5, 6], w, w, [7, 8, 9], [10, 11, 12], w])
        #expect(embedded.animation == nil)
    }

    @Test("negative offsets and canvases smaller than the image cut what falls outside")
    func embedCuts() throws {
        // Given a 3x2 gray image 1 2 3 / 4 5 6 (with row padding)
        let image = P.image(3, 2, .gray8, padding: 3, [[1], [2], [3], [4], [5], [6]])
        let black = Color.black
        // When it is embedded at (-1, -1) on a 3x3 canvas: pixels 5 and 6 land at (0, 0) and (1, 0)
        let shifted = try #require(ImageProcessors.Embed(size: ImageSize(width: 3, height: 3), x: -1, y: -1, background: black).process(image))
        #expect(shifted.pixelFormat == .gray8)
        #expect(P.pixels(shifted) == [[5], [6], [0], [0], [0], [0], [0], [0], [0]])
        // When the canvas is 2x1 at (-1, 0): only pixels 2 and 3 remain
        let cut = try #require(ImageProcessors.Embed(size: ImageSize(width: 2, height: 1), x: -1, y: 0, background: black).process(image))
        #expect(P.pixels(cut) == [[2], [3]])
        // When the image lies wholly outside, the canvas is all background
        for (x, y) in [(3, 0), (-3, 0), (0, 3), (0, -2), (Int.max, Int.min), (Int.min, Int.max)] {
            let outside = try #require(ImageProcessors.Embed(size: ImageSize(width: 2, height: 2), x: x, y: y, background: black).process(image))
            #expect(P.pixels(outside) == [[0], [0], [0], [0]], "at (\(x), \(y))")
        }
    }

    @Test("the result has alpha for an alpha image or a translucent background, and colour unless both are gray")
    func embedFormats() throws {
        let gray = P.image(1, 1, .gray8, [[9]])
        let size = ImageSize(width: 2, height: 1)
        func embed(_ image: Image, _ background: Color) throws -> Image {
            try #require(ImageProcessors.Embed(size: size, x: 0, y: 0, background: background).process(image))
        }
        // Gray on a gray: gray
        let onGray = try embed(gray, Color(red: 50, green: 50, blue: 50))
        #expect(onGray.pixelFormat == .gray8)
        #expect(P.pixels(onGray) == [[9], [50]])
        // Gray on a colour: colour, the gray spread
        let onColor = try embed(gray, Color(red: 1, green: 2, blue: 3))
        #expect(onColor.pixelFormat == .rgb8)
        #expect(P.pixels(onColor) == [[9, 9, 9], [1, 2, 3]])
        // Gray on transparent (a gray too): gray with alpha, the image opaque
        let onTransparent = try embed(gray, .transparent)
        #expect(onTransparent.pixelFormat == .grayAlpha8)
        #expect(P.pixels(onTransparent) == [[9, 255], [0, 0]])
        // Gray on a translucent colour: RGBA
        let onTranslucent = try embed(gray, Color(red: 1, green: 2, blue: 3, alpha: 4))
        #expect(onTranslucent.pixelFormat == .rgba8)
        #expect(P.pixels(onTranslucent) == [[9, 9, 9, 255], [1, 2, 3, 4]])
        // An alpha image keeps its alpha on an opaque background: pixels are copied, not composited
        let translucent = P.image(1, 1, .rgba8, [[10, 20, 30, 40]])
        let copied = try embed(translucent, .white)
        #expect(copied.pixelFormat == .rgba8)
        #expect(P.pixels(copied) == [[10, 20, 30, 40], [255, 255, 255, 255]])
        let grayAlpha = P.image(1, 1, .grayAlpha8, [[10, 40]])
        #expect(P.pixels(try embed(grayAlpha, .black)) == [[10, 40], [0, 255]])
    }

    @Test("an empty, negative or oversized canvas is nil; the image's own canvas returns it")
    func embedLimits() throws {
        let image = P.distinct(.rgb8)
        for size in [(0, 1), (1, 0), (-5, 3), (3, Int.min), (Int.max, Int.max), (100_000, 100_000), (Int.max, 2)] {
            let embed = ImageProcessors.Embed(size: ImageSize(width: size.0, height: size.1), x: 0, y: 0)
            #expect(embed.process(image) == nil, "\(size)")
        }
        let same = ImageProcessors.Embed(size: image.size, x: 0, y: 0, background: .black)
        #expect(same.process(image) == image)
        #expect(ImageProcessors.Embed(size: image.size, x: 0, y: 0).process(image)?.pixelFormat == .rgba8, "transparent adds alpha")
        #expect(ImageProcessors.Embed(size: image.size, x: 1, y: 0, background: .black).process(image) != image)
    }

    @Test("embed's identifier holds every parameter")
    func embedIdentifier() {
        let embed: ImageProcessors.Embed = .embed(
            in: ImageSize(width: 30, height: 20), x: -4, y: 5, background: Color(red: 255, green: 0, blue: 16, alpha: 3))
        #expect(embed.identifier == "embed(30x20,-4,5,#ff001003)")
        #expect(
            ImageProcessors.Embed(size: ImageSize(width: 30, height: 20), x: -4, y: 5, background: .white).identifier == "embed(30x20,-4,5,#ffffff)")
    }

    @Test("random canvases and offsets: every pixel is the image's or the background, in the promised format")
    func embedRandom() throws {
        var generator = SeededGenerator(seed: 0x5EED_E4BE)
        for _ in 0..<300 {
            let format = P.formats.randomElement(using: &generator)!
            let image = P.random(Int.random(in: 1...6, using: &generator), Int.random(in: 1...6, using: &generator), format, using: &generator)
            let size = ImageSize(width: Int.random(in: -1...9, using: &generator), height: Int.random(in: -1...9, using: &generator))
            let extremes = [Int.min, Int.min + 1, -1_000, 1_000, Int.max]
            let x = Bool.random(using: &generator) ? Int.random(in: -8...10, using: &generator) : extremes.randomElement(using: &generator)!
            let y = Int.random(in: -8...10, using: &generator)
            let background = Color(
                red: .random(in: 0...255, using: &generator), green: .random(in: 0...255, using: &generator),
                blue: .random(in: 0...255, using: &generator), alpha: [0, 128, 255].randomElement(using: &generator)!)
            let gray = Bool.random(using: &generator)
            let color = gray ? Color(red: background.red, green: background.red, blue: background.red, alpha: background.alpha) : background
            let embedded = ImageProcessors.Embed(size: size, x: x, y: y, background: color).process(image)
            guard size.width > 0, size.height > 0 else {
                #expect(embedded == nil)
                continue
            }
            let result = try #require(embedded)
            #expect(result.size == size)
            #expect(result.pixelFormat.hasAlpha == (format.hasAlpha || color.alpha < 255))
            #expect(result.pixelFormat.hasColor == (format.hasColor || !color.isGray))
            for cy in 0..<size.height {
                for cx in 0..<size.width {
                    let (ix, iy) = (cx.subtractingReportingOverflow(x), cy - y)
                    let inside = !ix.overflow && (0..<image.width).contains(ix.partialValue) && (0..<image.height).contains(iy)
                    let expected =
                        inside
                        ? P.rgba(image, ix.partialValue, iy)
                        : [color.red, color.green, color.blue, result.pixelFormat.hasAlpha ? color.alpha : 255]
                    #expect(P.rgba(result, cx, cy) == expected)
                }
            }
        }
    }

    // MARK: Flatten

    @Test("flatten composites over the background, rounding to nearest, and drops alpha")
    func flatten() throws {
        // Given RGBA pixels: half-transparent, fully transparent, opaque, and one that rounds up
        let image = P.image(4, 1, .rgba8, [[200, 100, 50, 128], [10, 20, 30, 0], [1, 2, 3, 255], [201, 0, 255, 128]])
        // When flattened over opaque blue
        let flat = try #require(ImageProcessors.Flatten(background: Color(red: 0, green: 0, blue: 255)).process(image))
        // Then each channel is (c a + b (255 - a)) / 255 rounded: 200 * 128 / 255 = 100.39 -> 100,
        // 100 * 128 / 255 = 50.2 -> 50, (50 * 128 + 255 * 127) / 255 = 152.1 -> 152; 201 * 128 / 255 = 100.9 -> 101
        #expect(flat.pixelFormat == .rgb8)
        #expect(P.pixels(flat) == [[100, 50, 152], [0, 0, 255], [1, 2, 3], [101, 0, 255]])
    }

    @Test("gray with alpha over a gray stays gray; over a colour it becomes RGB; the background's alpha is ignored")
    func flattenFormats() throws {
        let image = P.image(2, 1, .grayAlpha8, [[200, 128], [0, 0]])
        let overGray = try #require(ImageProcessors.Flatten(background: Color(red: 100, green: 100, blue: 100, alpha: 0)).process(image))
        #expect(overGray.pixelFormat == .gray8)
        // (200 * 128 + 100 * 127) / 255 = 150.2 -> 150
        #expect(P.pixels(overGray) == [[150], [100]])
        let overColor = try #require(ImageProcessors.Flatten(background: Color(red: 255, green: 0, blue: 100)).process(image))
        #expect(overColor.pixelFormat == .rgb8)
        // red (200 * 128 + 255 * 127) / 255 = 227.4 -> 227; green 100.4 -> 100; blue (25600 + 12700) / 255 = 150.2 -> 150
        #expect(P.pixels(overColor) == [[227, 100, 150], [255, 0, 100]])
        #expect(ImageProcessors.Flatten(background: .white).identifier == "flatten(#ffffff)")
        #expect(ImageProcessors.Flatten(background: Color(red: 1, green: 2, blue: 3, alpha: 9)).identifier == "flatten(#010203)")
    }

    @Test("an image without alpha is returned as is")
    func flattenOpaque() {
        for format in [Image.PixelFormat.gray8, .rgb8] {
            let image = P.distinct(format)
            #expect(ImageProcessors.Flatten(background: .black).process(image) == image)
        }
    }

    @Test("random images: flatten matches the compositing formula for every pixel")
    func flattenRandom() throws {
        var generator = SeededGenerator(seed: 0xF1A7)
        for _ in 0..<100 {
            let format: Image.PixelFormat = Bool.random(using: &generator) ? .rgba8 : .grayAlpha8
            let image = P.random(Int.random(in: 1...9, using: &generator), Int.random(in: 1...9, using: &generator), format, using: &generator)
            let level = UInt8.random(in: 0...255, using: &generator)
            let background =
                Bool.random(using: &generator)
                ? Color(red: level, green: level, blue: level) : Color(red: level, green: .random(in: 0...255, using: &generator), blue: 7)
            let flat = try #require(ImageProcessors.Flatten(background: background).process(image))
            #expect(flat.size == image.size)
            #expect(flat.pixelFormat == (format == .grayAlpha8 && background.isGray ? .gray8 : .rgb8))
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let source = P.rgba(image, x, y)
                    let alpha = Double(source[3]) / 255
                    let backdrop = [background.red, background.green, background.blue]
                    let expected = (0..<3).map { UInt8((Double(source[$0]) * alpha + Double(backdrop[$0]) * (1 - alpha)).rounded()) }
                    #expect(Array(P.rgba(flat, x, y).prefix(3)) == expected)
                }
            }
        }
    }

    // MARK: Rotate and flip

    /// The pixels of `P.distinct(format)` (numbered 0 1 2 / 3 4 5) in the order `indices` lists them.
    static func arranged(_ format: Image.PixelFormat, _ indices: [Int]) -> [[UInt8]] {
        indices.map { index in (0..<format.bytesPerPixel).map { UInt8(10 * index + $0 + 1) } }
    }

    @Test("rotations by 1, 2, 3, -1 and 5 quarter turns move every pixel where a clockwise turn puts it", arguments: PixelFixtures.formats)
    func rotate(_ format: Image.PixelFormat) throws {
        // Given a 3x2 image, pixels 0 1 2 / 3 4 5, with row padding
        let plain = P.distinct(format)
        let image = P.image(3, 2, format, padding: 2, P.pixels(plain))
        // When turned, Then (clockwise: the left column becomes the top row, read bottom to top)
        let cases: [(turns: Int, width: Int, order: [Int])] = [
            (1, 2, [3, 0, 4, 1, 5, 2]),
            (2, 3, [5, 4, 3, 2, 1, 0]),
            (3, 2, [2, 5, 1, 4, 0, 3]),
            (-1, 2, [2, 5, 1, 4, 0, 3]),
            (5, 2, [3, 0, 4, 1, 5, 2]),
            (-6, 3, [5, 4, 3, 2, 1, 0]),
        ]
        for (turns, width, order) in cases {
            let turned = try #require(ImageProcessors.Rotate(quarterTurns: turns).process(image))
            #expect(turned.width == width && turned.height == 6 / width, "\(turns)")
            #expect(turned.pixelFormat == format)
            #expect(P.pixels(turned) == Self.arranged(format, order), "\(turns) turns")
        }
        for turns in [0, 4, -4, Int.min] {
            #expect(ImageProcessors.Rotate(quarterTurns: turns).process(image) == image, "\(turns) turns")
        }
    }

    @Test("flips mirror left-right, top-bottom, or both", arguments: PixelFixtures.formats)
    func flip(_ format: Image.PixelFormat) throws {
        let image = P.image(3, 2, format, padding: 1, P.pixels(P.distinct(format)))
        let horizontal = try #require(ImageProcessors.Flip(horizontal: true, vertical: false).process(image))
        #expect(P.pixels(horizontal) == Self.arranged(format, [2, 1, 0, 5, 4, 3]))
        let vertical = try #require(ImageProcessors.Flip(horizontal: false, vertical: true).process(image))
        #expect(P.pixels(vertical) == Self.arranged(format, [3, 4, 5, 0, 1, 2]))
        let both = try #require(ImageProcessors.Flip(horizontal: true, vertical: true).process(image))
        #expect(P.pixels(both) == Self.arranged(format, [5, 4, 3, 2, 1, 0]))
        #expect(ImageProcessors.Flip(horizontal: false, vertical: false).process(image) == image)
    }

    @Test("rotate and flip identifiers: turns modulo 4, the axes named")
    func rotateAndFlipIdentifiers() {
        #expect(ImageProcessors.Rotate(quarterTurns: 1).identifier == "rotate(1)")
        #expect(ImageProcessors.Rotate.rotate(quarterTurns: 5).identifier == "rotate(1)")
        #expect(ImageProcessors.Rotate(quarterTurns: -1).identifier == "rotate(3)")
        #expect(ImageProcessors.Rotate(quarterTurns: Int.min).identifier == "rotate(0)")
        #expect(ImageProcessors.Rotate(quarterTurns: Int.max).identifier == "rotate(3)")
        #expect(ImageProcessors.Flip.flip(horizontal: true).identifier == "flip(horizontal)")
        #expect(ImageProcessors.Flip.flip(vertical: true).identifier == "flip(vertical)")
        #expect(ImageProcessors.Flip(horizontal: true, vertical: true).identifier == "flip(horizontal,vertical)")
        #expect(ImageProcessors.Flip(horizontal: false, vertical: false).identifier == "flip()")
    }

    @Test("random images: four quarter turns and two flips give the image back; a half turn is both flips")
    func rotateAndFlipRandom() throws {
        var generator = SeededGenerator(seed: 0x7075)
        for _ in 0..<100 {
            let format = P.formats.randomElement(using: &generator)!
            let image = P.random(Int.random(in: 1...12, using: &generator), Int.random(in: 1...12, using: &generator), format, using: &generator)
            let tight = try #require(Image(width: image.width, height: image.height, pixelFormat: format, pixels: P.pixels(image).flatMap { $0 }))
            let turns = Int.random(in: -9...9, using: &generator)
            var turned = image
            for _ in 0..<4 { turned = try #require(ImageProcessors.Rotate(quarterTurns: turns).process(turned)) }
            #expect(P.pixels(turned) == P.pixels(image))
            let once = try #require(ImageProcessors.Rotate(quarterTurns: turns).process(image))
            #expect(once.size == (turns % 2 == 0 ? image.size : image.size.transposed))
            let back = try #require(ImageProcessors.Rotate(quarterTurns: -turns).process(once))
            #expect(P.pixels(back) == P.pixels(image))
            let half = try #require(ImageProcessors.Rotate(quarterTurns: 2).process(image))
            #expect(half == ImageProcessors.Flip(horizontal: true, vertical: true).process(tight))
            let horizontal = Bool.random(using: &generator)
            let flip = ImageProcessors.Flip(horizontal: horizontal, vertical: !horizontal)
            let flipped = try #require(flip.process(image))
            let twice = try #require(flip.process(flipped))
            #expect(twice == tight)
        }
    }

    // MARK: Pixelate

    @Test("pixelate averages blocks from the top-left corner; partial edge blocks average what they cover")
    func pixelate() throws {
        // Given a 5x3 gray image
        let image = P.image(
            5, 3, .gray8,
            [
                [10], [20], [100], [101], [7],
                [30], [41], [103], [104], [9],
                [1], [2], [200], [0], [50],
            ])
        // When pixelated in blocks of 2
        let blocks = try #require(ImageProcessors.Pixelate(size: 2).process(image))
        // Then blocks: (10+20+30+41)/4 = 25.25 -> 25; (100+101+103+104)/4 = 102; (7+9)/2 = 8;
        // bottom row: (1+2)/2 = 1.5 -> 2 (halves up); (200+0)/2 = 100; 50
        #expect(blocks.pixelFormat == .gray8)
        #expect(
            P.pixels(blocks) == [
                [25], [25], [102], [102], [8],
                [25], [25], [102], [102], [8],
                [2], [2], [100], [100], [50],
            ])
    }

    @Test("pixelate weights colour by alpha, so a transparent pixel does not tint its block")
    func pixelateAlpha() throws {
        let image = P.image(2, 2, .rgba8, [[255, 0, 0, 0], [0, 0, 200, 255], [0, 0, 200, 255], [0, 0, 100, 255]])
        let blocks = try #require(ImageProcessors.Pixelate(size: 2).process(image))
        // Colour (200 + 200 + 100) / 3 = 166.7 -> 167 over the opaque three; alpha 765 / 4 = 191.25 -> 191
        #expect(P.pixels(blocks) == Array(repeating: [0, 0, 167, 191], count: 4))
    }

    @Test("size 1 or less returns the image; a size beyond the longer side is clamped to it")
    func pixelateSizes() throws {
        let image = P.image(4, 2, .rgb8, (0..<8).map { [UInt8($0 * 10), 0, 0] })
        for size in [1, 0, -3, Int.min] { #expect(ImageProcessors.Pixelate(size: size).process(image) == image, "\(size)") }
        let whole = try #require(ImageProcessors.Pixelate(size: Int.max).process(image))
        // (0 + 10 + ... + 70) / 8 = 35
        #expect(P.pixels(whole) == Array(repeating: [35, 0, 0], count: 8))
        #expect(ImageProcessors.Pixelate(size: Int.max).process(image) == ImageProcessors.Pixelate(size: 4).process(image))
        #expect(ImageProcessors.Pixelate.pixelate(size: 8).identifier == "pixelate(8)")
        let single = P.image(1, 1, .gray8, [[3]])
        #expect(ImageProcessors.Pixelate(size: 5).process(single) == single)
    }

    @Test("random images: every block is uniform and within its pixels' range")
    func pixelateRandom() throws {
        var generator = SeededGenerator(seed: 0x9153)
        for _ in 0..<150 {
            let format = P.formats.randomElement(using: &generator)!
            let image = P.random(Int.random(in: 1...13, using: &generator), Int.random(in: 1...13, using: &generator), format, using: &generator)
            let size = Int.random(in: -1...15, using: &generator)
            let result = try #require(ImageProcessors.Pixelate(size: size).process(image))
            #expect(result.size == image.size)
            #expect(result.pixelFormat == format)
            let block = min(size, max(image.width, image.height))
            guard block > 1 else {
                #expect(result == image)
                continue
            }
            for top in stride(from: 0, to: image.height, by: block) {
                for left in stride(from: 0, to: image.width, by: block) {
                    let points = (top..<min(image.height, top + block)).flatMap { y in (left..<min(image.width, left + block)).map { (x: $0, y: y) } }
                    let values = Set(points.map { P.pixel(result, $0.x, $0.y) })
                    #expect(values.count == 1, "uniform block at (\(left), \(top))")
                    // Alpha (or every channel of an opaque image) is a plain mean: within the block's range.
                    let checked = format.hasAlpha ? [format.bytesPerPixel - 1] : Array(0..<format.bytesPerPixel)
                    for channel in checked {
                        let sources = points.map { P.pixel(image, $0.x, $0.y)[channel] }
                        let value = P.pixel(result, left, top)[channel]
                        #expect(value >= sources.min()! && value <= sources.max()!)
                    }
                }
            }
        }
    }
}
