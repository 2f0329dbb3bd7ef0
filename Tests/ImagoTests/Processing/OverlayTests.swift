import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("Overlay: Porter-Duff over at an offset, opacity, tiling; the image's alpha kept")
struct OverlayTests {
    typealias P = PixelFixtures

    /// A 2x2 opaque RGBA overlay: A B / C D.
    static let (a, b, c, d): ([UInt8], [UInt8], [UInt8], [UInt8]) = ([250, 0, 0, 255], [0, 250, 0, 255], [0, 0, 250, 255], [9, 9, 9, 255])
    static let tile = PixelFixtures.image(2, 2, .rgba8, [a, b, c, d])

    @Test("an opaque overlay replaces the pixels it covers, at any offset; only the overlapping part is drawn")
    func offsets() throws {
        // Given a black 4x3 RGB image
        let image = P.solid(4, 3, .rgb8, [0, 0, 0])
        let (a, b, c, d) = (Array(Self.a.prefix(3)), Array(Self.b.prefix(3)), Array(Self.c.prefix(3)), Array(Self.d.prefix(3)))
        let o: [UInt8] = [0, 0, 0]
        // When the overlay is drawn at (1, 1), Then exactly its four pixels change, and the image stays RGB
        let inside = try #require(ImageProcessors.Overlay(Self.tile, named: "tile", x: 1, y: 1).process(image))
        #expect(inside.pixelFormat == .rgb8)
        #expect(P.pixels(inside) == [o, o, o, o, o, a, b, o, o, c, d, o])
        // At (-1, -1) only D lands, at (0, 0)
        let corner = try #require(ImageProcessors.Overlay(Self.tile, named: "tile", x: -1, y: -1).process(image))
        #expect(P.pixels(corner) == [d, o, o, o, o, o, o, o, o, o, o, o])
        // At (3, 2) only A lands, at the bottom-right pixel
        let edge = try #require(ImageProcessors.Overlay(Self.tile, named: "tile", x: 3, y: 2).process(image))
        #expect(P.pixels(edge) == [o, o, o, o, o, o, o, o, o, o, o, a])
        // Wholly outside: the image itself
        for (x, y) in [(4, 0), (-2, 0), (0, 3), (0, -2), (Int.max, 0), (Int.min, Int.min)] {
            #expect(ImageProcessors.Overlay(Self.tile, named: "tile", x: x, y: y).process(image) == image, "(\(x), \(y))")
        }
    }

    @Test("opacity scales the overlay's alpha; the result is rounded to nearest")
    func opacity() throws {
        // Given a gray-100 RGB pixel under opaque red and half-transparent red
        let image = P.solid(2, 1, .rgb8, [100, 100, 100])
        let red = P.image(2, 1, .rgba8, [[255, 0, 0, 255], [255, 0, 0, 128]])
        // When drawn with opacity 0.5
        let drawn = try #require(ImageProcessors.Overlay(red, named: "red", x: 0, y: 0, opacity: 0.5).process(image))
        // Then coverage 0.5: 255 * 0.5 + 100 * 0.5 = 177.5 -> 178, 50; coverage 128 / 255 * 0.5 = 0.251: 64.0 + 74.9 = 138.9 -> 139, 74.9 -> 75
        #expect(P.pixels(drawn) == [[178, 50, 50], [139, 75, 75]])
        // Opacity 0 (or NaN, or below) draws nothing; above 1 counts as 1
        for opacity in [0, -1, Double.nan] {
            #expect(ImageProcessors.Overlay(red, named: "red", x: 0, y: 0, opacity: opacity).process(image) == image)
        }
        let full = try #require(ImageProcessors.Overlay(red, named: "red", x: 0, y: 0, opacity: 7).process(image))
        #expect(P.pixel(full, 0, 0) == [255, 0, 0])
    }

    @Test("over a translucent image, colours are weighted by alpha and the alphas combine")
    func straightAlpha() throws {
        // Given a transparent pixel and a half-transparent blue one
        let image = P.image(2, 1, .rgba8, [[0, 0, 0, 0], [0, 0, 255, 128]])
        let overlay = P.image(2, 1, .rgba8, [[200, 100, 50, 128], [255, 0, 0, 128]])
        // When the half-transparent overlay is drawn
        let drawn = try #require(ImageProcessors.Overlay(overlay, named: "o", x: 0, y: 0).process(image))
        // Then over nothing the overlay pixel is kept as it is; over blue: alpha 0.502 + 0.502 * 0.498 = 0.752 -> 192,
        // red 255 * 0.502 / 0.752 = 170.2 -> 170, blue 255 * 0.25 / 0.752 = 84.8 -> 85
        #expect(drawn.pixelFormat == .rgba8)
        #expect(P.pixels(drawn) == [[200, 100, 50, 128], [170, 0, 85, 192]])
    }

    @Test("a gray image becomes RGB under a colour overlay and stays gray under a gray one; alpha is the image's")
    func formats() throws {
        let gray = P.solid(2, 1, .gray8, [40])
        let colored = try #require(ImageProcessors.Overlay(P.image(1, 1, .rgb8, [[1, 2, 3]]), named: "c", x: 1, y: 0).process(gray))
        #expect(colored.pixelFormat == .rgb8)
        #expect(P.pixels(colored) == [[40, 40, 40], [1, 2, 3]])
        let grayOverlay = P.image(1, 1, .grayAlpha8, [[200, 255]])
        let stillGray = try #require(ImageProcessors.Overlay(grayOverlay, named: "g", x: 0, y: 0).process(gray))
        #expect(stillGray.pixelFormat == .gray8)
        #expect(P.pixels(stillGray) == [[200], [40]])
        let grayAlpha = P.solid(2, 1, .grayAlpha8, [40, 0])
        let onClear = try #require(ImageProcessors.Overlay(P.image(1, 1, .gray8, [[7]]), named: "g", x: 0, y: 0).process(grayAlpha))
        #expect(onClear.pixelFormat == .grayAlpha8)
        #expect(P.pixels(onClear) == [[7, 255], [40, 0]])
    }

    @Test("repeating tiles the overlay over the whole image, the grid through (x, y) in every direction")
    func repeating() throws {
        let image = P.solid(5, 4, .rgb8, [0, 0, 0])
        let (a, b, c, d) = (Array(Self.a.prefix(3)), Array(Self.b.prefix(3)), Array(Self.c.prefix(3)), Array(Self.d.prefix(3)))
        // Tiles at (1, 1): column 0 and row 0 show the tiles above and to the left
        let tiled = try #require(ImageProcessors.Overlay(Self.tile, named: "tile", x: 1, y: 1, repeating: true).process(image))
        #expect(
            P.pixels(tiled) == [
                d, c, d, c, d,
                b, a, b, a, b,
                d, c, d, c, d,
                b, a, b, a, b,
            ])
        // A grid far away lands the same as its remainder: Int.min is even, Int.max odd
        let far = try #require(ImageProcessors.Overlay(Self.tile, named: "tile", x: Int.min, y: Int.max, repeating: true).process(image))
        #expect(far == ImageProcessors.Overlay(Self.tile, named: "tile", x: 0, y: 1, repeating: true).process(image))
        #expect(P.pixel(far, 0, 0) == c)
    }

    @Test("the identifier holds the length-prefixed name, the overlay's size and every parameter")
    func identifier() {
        let overlay = ImageProcessors.Overlay.overlay(Self.tile, named: "logo,1", x: -3, y: 4, opacity: 0.25, repeating: true)
        #expect(overlay.identifier == "overlay(6:logo,1,2x2,-3,4,0.25,repeating)")
        #expect(ImageProcessors.Overlay(Self.tile, named: "", x: 0, y: 0).identifier == "overlay(0:,2x2,0,0,1.0)")
        // A name that looks like fields cannot pass for other parameters.
        let tricky = ImageProcessors.Overlay(Self.tile, named: "a,2x2,0,0,1.0", x: 0, y: 0).identifier
        #expect(tricky != ImageProcessors.Overlay(Self.tile, named: "a", x: 0, y: 0).identifier)
    }

    @Test("random images and overlays: an opaque overlay's pixels where it covers, the image's elsewhere")
    func random() throws {
        var generator = SeededGenerator(seed: 0x0E7A)
        for _ in 0..<250 {
            let baseFormat = P.formats.randomElement(using: &generator)!
            let image = P.random(Int.random(in: 1...9, using: &generator), Int.random(in: 1...9, using: &generator), baseFormat, using: &generator)
            // Opaque overlays (no alpha channel) replace what they cover, which a reference can say exactly.
            let overlayFormat: Image.PixelFormat = Bool.random(using: &generator) ? .gray8 : .rgb8
            let overlay = P.random(
                Int.random(in: 1...4, using: &generator), Int.random(in: 1...4, using: &generator), overlayFormat, using: &generator)
            let x = [Int.random(in: -6...10, using: &generator), Int.min, Int.max].randomElement(using: &generator)!
            let y = Int.random(in: -6...10, using: &generator)
            let repeating = Bool.random(using: &generator)
            let drawn = try #require(ImageProcessors.Overlay(overlay, named: "r", x: x, y: y, repeating: repeating).process(image))
            #expect(drawn.size == image.size)
            #expect(drawn.animation == nil)
            var covered = false
            for row in 0..<image.height {
                for column in 0..<image.width {
                    // The overlay pixel over (column, row), if any.
                    let ox = ((column % overlay.width) - (x % overlay.width) + 2 * overlay.width) % overlay.width
                    let oy = ((row % overlay.height) - (y % overlay.height) + 2 * overlay.height) % overlay.height
                    let dx = column.subtractingReportingOverflow(x)
                    let over = repeating || (!dx.overflow && (0..<overlay.width).contains(dx.partialValue) && (0..<overlay.height).contains(row - y))
                    covered = covered || over
                    // An opaque overlay pixel makes an opaque pixel.
                    let expected = over ? P.rgba(overlay, ox, oy) : P.rgba(image, column, row)
                    #expect(P.rgba(drawn, column, row) == expected)
                }
            }
            if covered {
                #expect(drawn.pixelFormat == baseFormat.adding(color: overlayFormat.hasColor, alpha: false))
            } else {
                #expect(drawn == image)
            }
        }
    }

    @Test("random translucent overlays and opacities: never lower alpha, never crash, opaque images stay opaque")
    func randomTranslucent() throws {
        var generator = SeededGenerator(seed: 0x7A11)
        for _ in 0..<200 {
            let image = P.random(
                Int.random(in: 1...8, using: &generator), Int.random(in: 1...8, using: &generator), P.formats.randomElement(using: &generator)!,
                using: &generator)
            let overlay = P.random(
                Int.random(in: 1...5, using: &generator), Int.random(in: 1...5, using: &generator), P.formats.randomElement(using: &generator)!,
                using: &generator)
            let opacity = Double.random(in: -0.2...1.2, using: &generator)
            let drawn = try #require(
                ImageProcessors.Overlay(
                    overlay, named: "t", x: Int.random(in: -5...8, using: &generator), y: Int.random(in: -5...8, using: &generator), opacity: opacity,
                    repeating: Bool.random(using: &generator)
                ).process(image))
            #expect(drawn.size == image.size)
            #expect(drawn.pixelFormat.hasAlpha == image.pixelFormat.hasAlpha)
            for y in 0..<image.height {
                for x in 0..<image.width { #expect(P.rgba(drawn, x, y)[3] >= P.rgba(image, x, y)[3]) }
            }
        }
    }
}
