import Foundation
import ImagoCodecFixtures
import ImagoCodecs
import Testing

@testable import ImagoServer

/// thumbor URLs run on pixels: sizes as thumbor answered them, and the
/// colour of known regions for trim, flips, rotate, fill and watermark.
@Suite("thumbor processing: trim, crops, resize, flips and filters on pixels")
struct ThumborProcessorTests {
    static func run(_ url: String, on image: Image, watermarks: [String: Image] = [:]) throws -> Image {
        let path = try ThumborPath(Substring(url))
        let processor = ThumborProcessor(path: path, filters: try ThumborFilter.list(path.filters), watermarks: watermarks)
        return try #require(processor.process(image), "\(url)")
    }

    static func color(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] { FormatFixtures.rgba(image, x: x, y: y) }

    static func near(_ a: [UInt8], _ b: [UInt8], _ tolerance: Int = 12) -> Bool {
        zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }

    /// 1024x768 white with a red box from (100, 50) to (899, 649), as in thumbor's trim example.
    static let bordered: Image = {
        var pixels = [UInt8](repeating: 255, count: 1024 * 768 * 3)
        for y in 50..<650 {
            for x in 100..<900 {
                pixels[(y * 1024 + x) * 3 + 1] = 0
                pixels[(y * 1024 + x) * 3 + 2] = 0
            }
        }
        return Image(width: 1024, height: 768, pixelFormat: .rgb8, pixels: pixels)!
    }()

    @Test("sizes on a 1024x768 image, filters included, as thumbor answered them")
    func sizes() throws {
        let land = FormatFixtures.quadrants(width: 1024, height: 768)
        for (url, size) in [
            ("/unsafe/300x200/land.jpg", "300x200"), ("/unsafe/fit-in/300x300/land.jpg", "300x225"),
            ("/unsafe/300x200/filters:rotate(90)/land.jpg", "200x300"), ("/unsafe/300x200/filters:rotate(-90)/land.jpg", "200x300"),
            ("/unsafe/300x200/filters:rotate(45)/land.jpg", "300x200"), ("/unsafe/300x200/filters:proportion(0.5)/land.jpg", "150x100"),
            ("/unsafe/filters:proportion(0.5)/land.jpg", "512x384"), ("/unsafe/300x200/filters:proportion(2)/land.jpg", "300x200"),
            ("/unsafe/fit-in/300x300/filters:fill(red)/land.jpg", "300x300"), ("/unsafe/fit-in/300x0/filters:fill(red)/land.jpg", "300x225"),
            ("/unsafe/full-fit-in/300x300/filters:fill(red)/land.jpg", "400x300"),
            ("/unsafe/300x200/filters:fill(red):rotate(90):proportion(0.5)/land.jpg", "100x150"),
            ("/unsafe/fit-in/300x300/filters:fill(blur)/land.jpg", "300x300"), ("/unsafe/fit-in/300x300/filters:fill(auto)/land.jpg", "300x300"),
        ] {
            #expect(try Self.run(url, on: land).size.description == size, "\(url)")
        }
        let small = FormatFixtures.quadrants(width: 200, height: 150)
        #expect(try Self.run("/unsafe/fit-in/300x300/filters:upscale()/small.jpg", on: small).size.description == "300x225")
        #expect(try Self.run("/unsafe/fit-in/300x0/filters:upscale()/small.jpg", on: small).size.description == "200x150")
    }

    @Test("trim cuts the border of the corner's colour; a manual crop after it is in the original's coordinates")
    func trim() throws {
        let trimmed = try Self.run("/unsafe/trim/border.png", on: Self.bordered)
        #expect(trimmed.size.description == "800x600" && Self.near(Self.color(trimmed, 0, 0), [255, 0, 0, 255], 0))
        #expect(try Self.run("/unsafe/trim:bottom-right:10/border.png", on: Self.bordered).size.description == "800x600")
        #expect(try Self.run("/unsafe/trim/200x100:600x400/border.png", on: Self.bordered).size.description == "400x300")
        let white = Image(width: 8, height: 8, pixelFormat: .rgb8, pixels: [UInt8](repeating: 255, count: 192))!
        #expect(try Self.run("/unsafe/trim/white.png", on: white) == white, "all border: nothing cut")
        // A gray of 250 on white is 8.66 away: kept at tolerance 5, cut at 9.
        var pixels = [UInt8](repeating: 255, count: 64 * 64 * 3)
        for y in 20..<40 { for x in 10..<30 { for c in 0..<3 { pixels[(y * 64 + x) * 3 + c] = 250 } } }
        let faint = Image(width: 64, height: 64, pixelFormat: .rgb8, pixels: pixels)!
        #expect(try Self.run("/unsafe/trim:top-left:5/faint.png", on: faint).size.description == "20x20")
        #expect(try Self.run("/unsafe/trim:top-left:9/faint.png", on: faint).size.description == "64x64")
        // Gray is compared as three equal channels: the same distances.
        let gray = Image(width: 64, height: 64, pixelFormat: .gray8, pixels: stride(from: 0, to: pixels.count, by: 3).map { pixels[$0] })!
        #expect(try Self.run("/unsafe/trim:top-left:5/faint.png", on: gray).size.description == "20x20")
        #expect(try Self.run("/unsafe/trim:top-left:9/faint.png", on: gray).size.description == "64x64")
    }

    @Test("flips mirror after the resize; rotate turns counter-clockwise")
    func flipsAndRotate() throws {
        let land = FormatFixtures.quadrants(width: 400, height: 300)
        let topLeft = Self.color(land, 10, 10)
        let topRight = Self.color(land, 390, 10)
        let bottomLeft = Self.color(land, 10, 290)
        #expect(Self.near(Self.color(try Self.run("/unsafe/-0x0/land.jpg", on: land), 10, 10), topRight))
        #expect(Self.near(Self.color(try Self.run("/unsafe/0x-0/land.jpg", on: land), 10, 10), bottomLeft))
        #expect(Self.near(Self.color(try Self.run("/unsafe/-200x-150/land.jpg", on: land), 190, 140), topLeft))
        // Counter-clockwise: the top-right corner comes to the top left.
        let turned = try Self.run("/unsafe/filters:rotate(90)/land.jpg", on: land)
        #expect(turned.size.description == "300x400" && Self.near(Self.color(turned, 10, 10), topRight))
        #expect(Self.near(Self.color(try Self.run("/unsafe/filters:rotate(-90)/land.jpg", on: land), 10, 10), bottomLeft))
    }

    @Test("fill: the colour around the fitted image, hex or CSS name; background_color flattens transparency")
    func fill() throws {
        let land = FormatFixtures.quadrants(width: 400, height: 300)
        let red = try Self.run("/unsafe/fit-in/300x300/filters:fill(red)/land.jpg", on: land)
        #expect(Self.near(Self.color(red, 150, 5), [255, 0, 0, 255], 0) && Self.near(Self.color(red, 10, 60), Self.color(land, 10, 10)))
        let green = try Self.run("/unsafe/fit-in/300x300/filters:fill(00ff00)/land.jpg", on: land)
        #expect(Self.near(Self.color(green, 150, 295), [0, 255, 0, 255], 0))
        let alpha = FormatFixtures.quadrants(width: 100, height: 100, alpha: true)
        let flattened = try Self.run("/unsafe/filters:background_color(blue)/a.png", on: alpha)
        #expect(!flattened.pixelFormat.hasAlpha)
        #expect(throws: OptionError.self) { try Self.run("/unsafe/fit-in/300x300/filters:fill(zzzz)/land.jpg", on: land) }
    }

    @Test("watermark: placed by pixels, from the end, centred, by percent; alpha 100 leaves the image as it was")
    func watermark() throws {
        let base = Image(width: 300, height: 200, pixelFormat: .rgb8, pixels: [UInt8](repeating: 255, count: 300 * 200 * 3))!
        let mark = Image(width: 200, height: 100, pixelFormat: .rgb8, pixels: [UInt8](repeating: 0, count: 200 * 100 * 3))!
        func marked(_ filter: String) throws -> Image { try Self.run("/unsafe/filters:\(filter)/base.png", on: base, watermarks: ["wm.png": mark]) }
        let placed = try marked("watermark(wm.png,10,10,0)")
        #expect(
            Self.color(placed, 10, 10) == [0, 0, 0, 255] && Self.color(placed, 209, 109) == [0, 0, 0, 255]
                && Self.color(placed, 210, 110) == [255, 255, 255, 255])
        let fromEnd = try marked("watermark(wm.png,-10,-10,0)")
        #expect(Self.color(fromEnd, 90, 90) == [0, 0, 0, 255] && Self.color(fromEnd, 89, 89) == [255, 255, 255, 255])
        let centred = try marked("watermark(wm.png,center,center,0)")
        #expect(Self.color(centred, 50, 50) == [0, 0, 0, 255] && Self.color(centred, 49, 49) == [255, 255, 255, 255])
        let percent = try marked("watermark(wm.png,50p,50p,0)")
        #expect(Self.color(percent, 150, 100) == [0, 0, 0, 255] && Self.color(percent, 149, 99) == [255, 255, 255, 255])
        #expect(try marked("watermark(wm.png,10,10,100)") == base)
        // Tiles of 60x30 (20% of each side): five columns edge to edge, six rows with the spare 20 px shared out (y = 0, 34, … 170).
        let tiled = try marked("watermark(wm.png,repeat,repeat,0,20,20)")
        #expect(Self.color(tiled, 299, 5) == [0, 0, 0, 255] && Self.color(tiled, 5, 31) == [255, 255, 255, 255])
        #expect(
            Self.color(tiled, 5, 34) == [0, 0, 0, 255] && Self.color(tiled, 5, 199) == [0, 0, 0, 255]
                && Self.color(tiled, 5, 167) == [255, 255, 255, 255])
        // Alpha 50 takes 127 from the mark's alpha: an opaque mark is drawn at half strength.
        let faded = try marked("watermark(wm.png,10,10,50)")
        #expect((120...135).contains(Int(Self.color(faded, 50, 50)[0])))
        let half = try marked("watermark(wm.png,0,0,50,50)")
        #expect(Self.color(half, 149, 74) != [255, 255, 255, 255] && Self.color(half, 151, 76) == [255, 255, 255, 255])
    }

    @Test("smart/ keeps the salient object whole where the centre would cut it; a flat image crops at the centre")
    func smart() throws {
        // A saturated red square near the left edge of a gray 400x200 image.
        var pixels = [UInt8](repeating: 128, count: 400 * 200 * 3)
        for y in 70..<130 {
            for x in 20..<80 {
                pixels[(y * 400 + x) * 3] = 230
                pixels[(y * 400 + x) * 3 + 1] = 20
                pixels[(y * 400 + x) * 3 + 2] = 20
            }
        }
        let image = Image(width: 400, height: 200, pixelFormat: .rgb8, pixels: pixels)!
        let centred = try Self.run("/unsafe/100x100/a.png", on: image)
        let smart = try Self.run("/unsafe/100x100/smart/a.png", on: image)
        func redPixels(_ image: Image) -> Int {
            (0..<image.height).reduce(0) { count, y in
                count + (0..<image.width).filter { x in Self.color(image, x, y)[0] > 180 && Self.color(image, x, y)[1] < 80 }.count
            }
        }
        #expect(redPixels(centred) == 0 && redPixels(smart) > 600, "\(redPixels(smart))")
        let flat = Image(width: 400, height: 200, pixelFormat: .rgb8, pixels: [UInt8](repeating: 90, count: 400 * 200 * 3))!
        let path = try ThumborPath("/unsafe/100x100/smart/a.png")
        let run = try #require(ThumborProcessor(path: path, filters: []).run(flat))
        #expect(run.plan.operations.first == .crop(left: 100, top: 0, right: 300, bottom: 200))
    }
}
