import ImagoCodecs
import Testing

@testable import ImagoServer

/// Where things land: gravity, focus point, `c`, extension, padding, trim,
/// rotation, flips, background and watermark, checked by the colour of
/// known regions of the answer, as imgproxy's semantics place them.
@Suite("Layout: gravity, crops, extension, padding, trim, turns, background, watermark")
struct LayoutPositionTests {
    static let red = Color(red: 255, green: 0, blue: 0)
    static let green = Color(red: 0, green: 255, blue: 0)
    static let blue = Color(red: 0, green: 0, blue: 255)
    static let yellow = Color(red: 255, green: 255, blue: 0)

    /// 200x100: four columns of 50 px, red, green, blue, yellow.
    static let columns = image(width: 200, height: 100) { x, _ in [red, green, blue, yellow][x / 50] }
    /// 100x200: four rows of 50 px, red, green, blue, yellow.
    static let rows = image(width: 100, height: 200) { _, y in [red, green, blue, yellow][y / 50] }

    static func image(width: Int, height: Int, alpha: Bool = false, _ color: (Int, Int) -> Color) -> Image {
        let channels = alpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                let c = color(x, y)
                let offset = (y * width + x) * channels
                pixels[offset] = c.red
                pixels[offset + 1] = c.green
                pixels[offset + 2] = c.blue
                if alpha { pixels[offset + 3] = c.alpha }
            }
        }
        return Image(width: width, height: height, pixelFormat: alpha ? .rgba8 : .rgb8, pixels: pixels)!
    }

    /// The colour at (x, y), alpha 255 where the image has none.
    static func color(_ image: Image, _ x: Int, _ y: Int) -> Color {
        let channels = image.pixelFormat.bytesPerPixel
        let offset = y * image.bytesPerRow + x * channels
        let p = image.pixels
        switch image.pixelFormat {
        case .gray8: return Color(red: p[offset], green: p[offset], blue: p[offset])
        case .grayAlpha8: return Color(red: p[offset], green: p[offset], blue: p[offset], alpha: p[offset + 1])
        case .rgb8: return Color(red: p[offset], green: p[offset + 1], blue: p[offset + 2])
        case .rgba8: return Color(red: p[offset], green: p[offset + 1], blue: p[offset + 2], alpha: p[offset + 3])
        }
    }

    static func near(_ a: Color, _ b: Color, tolerance: Int = 8) -> Bool {
        abs(Int(a.red) - Int(b.red)) <= tolerance && abs(Int(a.green) - Int(b.green)) <= tolerance && abs(Int(a.blue) - Int(b.blue)) <= tolerance
            && abs(Int(a.alpha) - Int(b.alpha)) <= tolerance
    }

    static func layout(
        _ image: Image, _ options: String, opaque: Bool = false, watermark: Image? = nil
    ) throws -> Image {
        let parsed = try ProcessingOptions.Parser().options(options.split(separator: "/"))
        let layout = LayoutProcessor(
            options: parsed, sourceSize: nil, orientation: .up, outputIsOpaque: opaque, maximumResultDimension: 8_192, watermark: watermark)
        return try #require(layout.process(image))
    }

    /// (options, size, then (x, y, colour) samples).
    static let cases: [(String, ImageSize, [(Int, Int, Color)])] = [
        // Gravity of the fill crop: 200x100 cut to 100x100.
        ("rs:fill:100:100", ImageSize(width: 100, height: 100), [(25, 50, green), (75, 50, blue)]),
        ("rs:fill:100:100/g:we", ImageSize(width: 100, height: 100), [(25, 50, red), (75, 50, green)]),
        ("rs:fill:100:100/g:ea", ImageSize(width: 100, height: 100), [(25, 50, blue), (75, 50, yellow)]),
        ("rs:fill:100:100/g:nowe", ImageSize(width: 100, height: 100), [(25, 50, red)]),
        ("rs:fill:100:100/g:soea", ImageSize(width: 100, height: 100), [(75, 50, yellow)]),
        // Offsets: pixels from the anchor (east counts leftwards), or fractions of the side.
        ("rs:fill:100:100/g:we:50", ImageSize(width: 100, height: 100), [(25, 50, green), (75, 50, blue)]),
        ("rs:fill:100:100/g:ea:50", ImageSize(width: 100, height: 100), [(25, 50, green), (75, 50, blue)]),
        ("rs:fill:100:100/g:ce:0.25", ImageSize(width: 100, height: 100), [(25, 50, blue), (75, 50, yellow)]),
        ("rs:fill:100:100/g:we:-40", ImageSize(width: 100, height: 100), [(25, 50, red)]),
        // A focus point centres the crop on it, kept inside.
        ("rs:fill:100:100/g:fp:0.5:0.5", ImageSize(width: 100, height: 100), [(25, 50, green), (75, 50, blue)]),
        ("rs:fill:100:100/g:fp:0.25:0.5", ImageSize(width: 100, height: 100), [(25, 50, red), (75, 50, green)]),
        ("rs:fill:100:100/g:fp:0.9:0.1", ImageSize(width: 100, height: 100), [(25, 50, blue), (75, 50, yellow)]),
        // c cuts before scaling, with its own gravity, or g's.
        ("c:50:100:we", ImageSize(width: 50, height: 100), [(25, 50, red)]),
        ("c:50:100/g:ea", ImageSize(width: 50, height: 100), [(25, 50, yellow)]),
        ("c:0.5:0:ea/g:we", ImageSize(width: 100, height: 100), [(25, 50, blue), (75, 50, yellow)]),
        ("c:100:100:we/w:50", ImageSize(width: 50, height: 50), [(12, 25, red), (37, 25, green)]),
        // Extension: the image on a transparent canvas of the box, placed by its gravity.
        (
            "rs:fit:300:300/ex:1", ImageSize(width: 300, height: 300),
            [(150, 10, .transparent), (10, 150, .transparent), (60, 150, red), (240, 150, yellow)]
        ),
        ("rs:fit:300:300/ex:1:so", ImageSize(width: 300, height: 300), [(60, 150, .transparent), (60, 250, red), (150, 150, .transparent)]),
        ("rs:fit:300:300/ex:1:nowe:10:20", ImageSize(width: 300, height: 300), [(5, 25, .transparent), (15, 25, red), (15, 15, .transparent)]),
        ("rs:fit:300:300/ex:1/bg:0000ff", ImageSize(width: 300, height: 300), [(150, 10, blue), (60, 150, red)]),
        // exar: the box's aspect ratio at the image's size.
        ("rs:fit:300:300/exar:1", ImageSize(width: 200, height: 200), [(100, 10, .transparent), (10, 100, red)]),
        // Padding: CSS order, transparent, or the background.
        (
            "pd:10:20:30:40", ImageSize(width: 260, height: 140),
            [(20, 50, .transparent), (45, 15, red), (45, 5, .transparent), (45, 130, .transparent)]
        ),
        ("pd:10/bg:00ff00", ImageSize(width: 220, height: 120), [(5, 5, green), (15, 15, red)]),
        ("pd:10", ImageSize(width: 220, height: 120), [(5, 5, .white), (15, 15, red)]),
        // Rotation and flips come first: imgproxy's sizes are of the turned image.
        ("rot:90", ImageSize(width: 100, height: 200), [(50, 25, red), (50, 175, yellow)]),
        ("rot:270", ImageSize(width: 100, height: 200), [(50, 25, yellow), (50, 175, red)]),
        ("rot:180", ImageSize(width: 200, height: 100), [(25, 50, yellow), (175, 50, red)]),
        ("fl:1", ImageSize(width: 200, height: 100), [(25, 50, yellow), (175, 50, red)]),
        ("rot:90/rs:fill:100:100/g:no", ImageSize(width: 100, height: 100), [(50, 25, red), (50, 75, green)]),
    ]

    @Test("each case's size and the colour of its known regions", arguments: 0..<cases.count)
    func region(_ index: Int) throws {
        let (options, size, samples) = Self.cases[index]
        // "pd:10" alone is checked as a JPEG would be: the padding flattened to white.
        let result = try Self.layout(Self.columns, options, opaque: options == "pd:10")
        #expect(result.size == size, "\(options)")
        guard result.size == size else { return }
        for (x, y, expected) in samples {
            let seen = Self.color(result, x, y)
            // A transparent pixel's colour is whatever; only its alpha counts.
            let matches = expected.alpha == 0 ? seen.alpha == 0 : Self.near(seen, expected)
            #expect(matches, "\(options): (\(x), \(y)) is \(seen), expected \(expected)")
        }
    }

    @Test("gravity north and south on a tall image; east offsets count leftwards, south offsets upwards")
    func vertical() throws {
        for (options, top, bottom) in [
            ("rs:fill:100:100/g:no", Self.red, Self.green), ("rs:fill:100:100/g:so", Self.blue, Self.yellow),
            ("rs:fill:100:100", Self.green, Self.blue), ("rs:fill:100:100/g:so:0:50", Self.green, Self.blue),
            ("rs:fill:100:100/g:no:0:50", Self.green, Self.blue),
        ] {
            let result = try Self.layout(Self.rows, options)
            #expect(Self.near(Self.color(result, 50, 25), top) && Self.near(Self.color(result, 50, 75), bottom), "\(options)")
        }
    }

    @Test("transparent pixels: kept where the format has alpha, else the background (white by default); bg fills them anyway")
    func background() throws {
        let halfClear = Self.image(width: 40, height: 20, alpha: true) { x, _ in x < 20 ? .transparent : Self.red }
        #expect(Self.color(try Self.layout(halfClear, "w:40"), 5, 5).alpha == 0)
        #expect(Self.near(Self.color(try Self.layout(halfClear, "w:40", opaque: true), 5, 5), .white))
        #expect(Self.near(Self.color(try Self.layout(halfClear, "bg:0000ff", opaque: true), 5, 5), Self.blue))
        let filled = try Self.layout(halfClear, "bg:00ff00")
        #expect(Self.near(Self.color(filled, 5, 5), Self.green) && Self.near(Self.color(filled, 30, 5), Self.red))
        // bg: with no colour turns filling off again, for formats with alpha.
        #expect(Self.color(try Self.layout(halfClear, "bg:00ff00/bg:"), 5, 5).alpha == 0)
    }

    @Test("g:sm keeps an off-centre object whole, in the fill crop and in c; a flat image crops at the centre")
    func smartCrop() throws {
        // A skin-toned disc of radius 30 centred at (270, 60) on a quiet gray ground, 320x120.
        let skin = Color(red: 224, green: 172, blue: 140)
        let scene = Self.image(width: 320, height: 120) { x, y in
            (x - 270) * (x - 270) + (y - 60) * (y - 60) <= 900 ? skin : Color(red: 128, green: 128, blue: 128)
        }
        func skinPixels(_ image: Image) -> Int {
            var count = 0
            for y in 0..<image.height {
                for x in 0..<image.width where Self.near(Self.color(image, x, y), skin, tolerance: 12) { count += 1 }
            }
            return count
        }
        let whole = skinPixels(scene)
        for options in ["rs:fill:120:120/g:sm", "c:120:120:sm", "c:120:120/g:sm"] {
            let cut = try Self.layout(scene, options)
            #expect(cut.size == ImageSize(width: 120, height: 120), "\(options)")
            // All of the disc but the few pixels its edge loses to resampling.
            #expect(Double(skinPixels(cut)) >= 0.95 * Double(whole), "\(options): \(skinPixels(cut)) of \(whole)")
        }
        #expect(skinPixels(try Self.layout(scene, "rs:fill:120:120")) == 0, "the centre cut misses it")
        // A gentle gradient, nothing salient: the window's middle is the image's (gray 120 at x 160).
        let gradient = Self.image(width: 320, height: 120) { x, _ in
            let level = UInt8(100 + x / 8)
            return Color(red: level, green: level, blue: level)
        }
        let centred = try Self.layout(gradient, "rs:fill:120:120/g:sm")
        #expect(Self.near(Self.color(centred, 60, 60), Color(red: 120, green: 120, blue: 120), tolerance: 1), "\(Self.color(centred, 60, 60))")
    }

    @Test("trim cuts a border of one colour, from the corner or as given, with equal sides on request")
    func trim() throws {
        // A red 60x40 block at (30, 10) in a 120x70 white image.
        let framed = Self.image(width: 120, height: 70) { x, y in (30..<90).contains(x) && (10..<50).contains(y) ? Self.red : .white }
        let trimmed = try Self.layout(framed, "t:10")
        #expect(trimmed.size == ImageSize(width: 60, height: 40))
        #expect(Self.near(Self.color(trimmed, 0, 0), Self.red) && Self.near(Self.color(trimmed, 59, 39), Self.red))
        #expect(try Self.layout(framed, "t:10:ffffff").size == ImageSize(width: 60, height: 40))
        // Red as the border's colour: nothing of it at the edges, so nothing is cut.
        #expect(try Self.layout(framed, "t:10:ff0000").size == ImageSize(width: 120, height: 70))
        // Off-centre: 10 px left and 40 px right; equal sides cut 10 each.
        let offCentre = Self.image(width: 120, height: 70) { x, y in (10..<80).contains(x) && (10..<60).contains(y) ? Self.red : .white }
        #expect(try Self.layout(offCentre, "t:10").size == ImageSize(width: 70, height: 50))
        #expect(try Self.layout(offCentre, "t:10::1").size == ImageSize(width: 100, height: 50))
        // Then the box applies to what is left.
        #expect(try Self.layout(framed, "t:10/w:30").size == ImageSize(width: 30, height: 20))
        // An image that is all border is kept whole.
        let flat = Self.image(width: 40, height: 30) { _, _ in .white }
        #expect(try Self.layout(flat, "t:10").size == ImageSize(width: 40, height: 30))
    }

    @Test("watermark: at its position with offsets, scaled, at its opacity, or tiled")
    func watermark() throws {
        let mark = Self.image(width: 20, height: 10) { _, _ in .black }
        let placed = try Self.layout(Self.columns, "wm:1:soea", watermark: mark)
        #expect(Self.near(Self.color(placed, 195, 95), .black) && Self.near(Self.color(placed, 175, 95), Self.yellow))
        let offset = try Self.layout(Self.columns, "wm:1:nowe:10:5", watermark: mark)
        #expect(Self.near(Self.color(offset, 5, 2), Self.red) && Self.near(Self.color(offset, 15, 10), .black))
        let half = try Self.layout(Self.columns, "wm:0.5:ce", watermark: mark)
        #expect(Self.near(Self.color(half, 100, 50), Color(red: 0, green: 0, blue: 128), tolerance: 3))
        // Scale 0.5 of 200x100: the 20x10 mark fitted into 100x50.
        let scaled = try Self.layout(Self.columns, "wm:1:nowe:0:0:0.5", watermark: mark)
        #expect(Self.near(Self.color(scaled, 95, 45), .black) && Self.near(Self.color(scaled, 105, 45), Self.blue))
        let tiled = try Self.layout(Self.columns, "wm:1:re", watermark: mark)
        #expect(Self.near(Self.color(tiled, 5, 5), .black) && Self.near(Self.color(tiled, 185, 95), .black))
        // With 20 px spacing, gaps between the tiles.
        let spaced = try Self.layout(Self.columns, "wm:1:re:20:10", watermark: mark)
        let dark = (0..<200).filter { Self.near(Self.color(spaced, $0, 7), .black) }.count
        #expect(dark > 60 && dark < 140, "\(dark) of 200 columns dark at y 7")
    }

    @Test("filters: blur softens an edge, pixelate makes blocks, gray and corners are Imago's")
    func filters() throws {
        let blurred = try Self.layout(Self.columns, "bl:4")
        let edge = Self.color(blurred, 50, 50)
        #expect(edge.red > 60 && edge.green > 60, "red and green mix at the edge: \(edge)")
        let pixelated = try Self.layout(Self.columns, "pix:40")
        // The block from x 40 to 79 averages 10 px of red and 30 of green.
        #expect(Self.near(Self.color(pixelated, 45, 20), Self.color(pixelated, 75, 35)))
        #expect(Self.near(Self.color(pixelated, 60, 20), Color(red: 64, green: 191, blue: 0), tolerance: 6))
        let gray = try Self.layout(Self.columns, "imago_gray:1")
        #expect(gray.pixelFormat == .gray8)
        let rounded = try Self.layout(Self.columns, "imago_radius:20")
        #expect(Self.color(rounded, 0, 0).alpha == 0 && Self.color(rounded, 100, 50).alpha == 255)
    }
}
