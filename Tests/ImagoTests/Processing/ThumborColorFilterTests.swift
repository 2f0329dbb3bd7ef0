import Foundation
import ImagoCodecFixtures
import Testing

@testable import ImagoCodecs

/// Saturation, equalize, convolution, curve and colorize, each against the
/// values thumbor 7.8's C filters (`thumbor/ext/filters/_saturation.c`,
/// `_equalize.c`, `_convolution.c`, `_curve.c`, `_colorize.c`) give for the
/// same pixels.
@Suite("thumbor's colour filters: saturation, equalize, convolution, curve, colorize")
struct ThumborColorFilterTests {
    static func image(_ pixels: [UInt8], width: Int, height: Int = 1, alpha: Bool = false) -> Image {
        Image(width: width, height: height, pixelFormat: alpha ? .rgba8 : .rgb8, pixels: pixels)!
    }

    @Test("saturation: p = √(0.299r² + 0.587g² + 0.114b²), then p + (c − p) × factor, truncated and clamped; alpha kept")
    func saturation() throws {
        let pixels: [UInt8] = [200, 100, 50, 10, 250, 128, 0, 0, 0, 255, 255, 255]
        let source = Self.image(pixels, width: 4)
        #expect(try #require(ImageProcessors.Saturation(factor: 2).process(source)).pixels == [255, 65, 0, 0, 255, 59, 0, 0, 0, 255, 255, 255])
        #expect(
            try #require(ImageProcessors.Saturation(factor: 0).process(source)).pixels == [134, 134, 134, 196, 196, 196, 0, 0, 0, 255, 255, 255])
        let translucent = Self.image([200, 100, 50, 77, 10, 250, 128, 200], width: 2, alpha: true)
        #expect(try #require(ImageProcessors.Saturation(factor: 0.5).process(translucent)).pixels == [167, 117, 92, 77, 103, 223, 162, 200])
        // A gray image is read as RGB, as thumbor reads it.
        let gray = Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [40, 200])!
        #expect(try #require(ImageProcessors.Saturation(factor: 3).process(gray)).pixels == [40, 40, 40, 200, 200, 200])
    }

    @Test(
        "equalize: (cdf − m) / (n − m) × 255 per channel, m only for the channels whose lowest value is the lowest of all, 0 for a channel of one value"
    )
    func equalize() throws {
        let flatBlue = Self.image([10, 50, 0, 10, 60, 0, 20, 70, 0, 30, 80, 0], width: 2, height: 2)
        #expect(try #require(ImageProcessors.Equalize().process(flatBlue)).pixels == [127, 63, 0, 127, 127, 0, 191, 191, 0, 255, 255, 0])
        let spread = Self.image([10, 50, 3, 10, 60, 3, 20, 70, 9, 30, 80, 200], width: 2, height: 2)
        #expect(try #require(ImageProcessors.Equalize().process(spread)).pixels == [127, 63, 0, 127, 127, 0, 191, 191, 127, 255, 255, 255])
    }

    @Test("convolution: edges repeated, weights normalised when asked, sums truncated and clamped, alpha convolved; kernels of even sides refused")
    func convolution() throws {
        let dot = Self.image([UInt8](repeating: 0, count: 12) + [90, 90, 90] + [UInt8](repeating: 0, count: 12), width: 3, height: 3)
        let box = try #require(ImageProcessors.Convolution(weights: Array(repeating: 1, count: 9), columns: 3, normalizes: true))
        #expect(try #require(box.process(dot)).pixels == [UInt8](repeating: 10, count: 27))
        let edges = try #require(ImageProcessors.Convolution(weights: [-1, -1, -1, -1, 8, -1, -1, -1, -1], columns: 3, normalizes: false))
        #expect(try #require(edges.process(dot)).pixels == [UInt8](repeating: 0, count: 12) + [255, 255, 255] + [UInt8](repeating: 0, count: 12))
        let row = Self.image([10, 20, 30, 255, 50, 60, 70, 128, 90, 100, 110, 0], width: 3, alpha: true)
        let smooth = try #require(ImageProcessors.Convolution(weights: [1, 2, 1], columns: 3, normalizes: true))
        #expect(try #require(smooth.process(row)).pixels == [20, 30, 40, 223, 50, 60, 70, 127, 80, 90, 100, 32])
        #expect(ImageProcessors.Convolution(weights: [1, 2, 1, 2], columns: 2, normalizes: true) == nil)
        #expect(ImageProcessors.Convolution(weights: [1, 2, 1, 2, 1, 2], columns: 3, normalizes: true) == nil)
        #expect(ImageProcessors.Convolution(weights: [1, .nan, 1], columns: 3, normalizes: true) == nil)
    }

    @Test("curve: natural cubic splines, each channel's then all's; before the first point its y, from the last point on its y")
    func curve() throws {
        let levels: [UInt8] = [0, 20, 40, 64, 100, 128, 160, 200, 230, 255]
        let ramp = Self.image(levels.flatMap { [$0, $0, $0] }, width: levels.count)
        func points(_ pairs: [(UInt8, UInt8)]) -> [ImageProcessors.ColorLookup.Point] { pairs.map { .init(x: $0.0, y: $0.1) } }
        let curve = try #require(
            ImageProcessors.ColorLookup.curve(
                all: points([(0, 0), (40, 59), (255, 255)]), red: points([(0, 0), (128, 160), (255, 255)]), green: points([(0, 0), (255, 255)]),
                blue: points([(10, 20), (200, 180), (240, 255)])))
        #expect(
            try #require(curve.process(ramp)).pixels == [
                0, 0, 30, 40, 30, 36, 79, 59, 49, 116, 90, 64, 161, 131, 93, 187, 159, 118, 209, 187, 153, 230, 217, 202, 244, 238, 241, 255, 255,
                255,
            ])
        #expect(ImageProcessors.ColorLookup.curve(all: [], red: points([(0, 0)]), green: points([(0, 0)]), blue: points([(0, 0)])) == nil)
        let backwards = points([(9, 0), (3, 4)])
        #expect(ImageProcessors.ColorLookup.curve(all: backwards, red: backwards, green: backwards, blue: backwards) == nil)
    }

    @Test("colorize: (value × (100 − p) + fill × p) / 100 per channel, truncated")
    func colorize() throws {
        let lookup = ImageProcessors.ColorLookup.colorize(red: 40, green: 80, blue: 20, fill: Color(red: 0xff, green: 0xd7, blue: 0))
        #expect(try #require(lookup.process(Self.image([100, 100, 100, 0, 255, 30], width: 2))).pixels == [162, 192, 80, 102, 223, 24])
    }
}

/// thumbor's `frame()`: a nine-patch drawn around and over the image.
@Suite("Nine-patch frames: padding, stretching, compositing")
struct NinePatchTests {
    /// A 5x5 patch: markers at the middle of each side (the middle row and
    /// column stretch; a padding of one pixel all round), red corners,
    /// green edges, a centre of `center`.
    static func patch(center: [UInt8]) -> Image {
        var pixels = [UInt8](repeating: 0, count: 5 * 5 * 4)
        func set(_ x: Int, _ y: Int, _ rgba: [UInt8]) { pixels.replaceSubrange(((y * 5 + x) * 4)..<((y * 5 + x) * 4 + 4), with: rgba) }
        for (x, y) in [(2, 0), (0, 2), (2, 4), (4, 2)] { set(x, y, [0, 0, 0, 255]) }
        for (x, y) in [(1, 1), (3, 1), (1, 3), (3, 3)] { set(x, y, [255, 0, 0, 255]) }
        for (x, y) in [(2, 1), (1, 2), (3, 2), (2, 3)] { set(x, y, [0, 255, 0, 255]) }
        set(2, 2, center)
        return Image(width: 5, height: 5, pixelFormat: .rgba8, pixels: pixels)!
    }

    @Test("the image is padded as the bottom and right markers say; fixed cells keep their size, stretching ones share the rest")
    func layout() throws {
        let frame = try #require(ImageProcessors.NinePatch(patch: Self.patch(center: [0, 0, 0, 0])))
        #expect(frame.padding == (1, 1, 1, 1))
        let blue = Image(width: 4, height: 3, pixelFormat: .rgb8, pixels: Array([[UInt8]](repeating: [0, 0, 255], count: 12).joined()))!
        let framed = try #require(frame.process(blue))
        #expect(framed.size == ImageSize(width: 6, height: 5) && framed.pixelFormat == .rgba8)
        let (red, green, inside): ([UInt8], [UInt8], [UInt8]) = ([255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255])
        for y in 0..<5 {
            for x in 0..<6 {
                let corner = (x == 0 || x == 5) && (y == 0 || y == 4)
                let edge = !corner && (x == 0 || x == 5 || y == 0 || y == 4)
                #expect(FormatFixtures.rgba(framed, x: x, y: y) == (corner ? red : edge ? green : inside), "(\(x), \(y))")
            }
        }
        #expect(ImageProcessors.NinePatch(patch: Image(width: 2, height: 5, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 40))!) == nil)
    }

    @Test("a translucent cell is composited over the image; transparent pixels of the image are on white first")
    func compositing() throws {
        let frame = try #require(ImageProcessors.NinePatch(patch: Self.patch(center: [255, 0, 0, 102])))
        let clear = Image(width: 2, height: 2, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 16))!
        let framed = try #require(frame.process(clear))
        // 40% red over white.
        let center = FormatFixtures.rgba(framed, x: 1, y: 1)
        #expect(abs(Int(center[0]) - 255) <= 1 && abs(Int(center[1]) - 153) <= 1 && abs(Int(center[2]) - 153) <= 1 && center[3] == 255, "\(center)")
    }
}
