import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("Trim bounds: libvips' find_trim (median 3x3, threshold per channel), imgproxy's magenta flattening and equal sides")
struct TrimTests {
    typealias P = PixelFixtures

    /// A `width` x `height` image of `border` with a `content` rectangle.
    static func framed(
        _ width: Int, _ height: Int, _ format: Image.PixelFormat, padding: Int = 0, border: [UInt8], content: [UInt8],
        rect: (x: Int, y: Int, width: Int, height: Int)
    ) -> Image {
        P.image(
            width, height, format, padding: padding,
            (0..<(width * height)).map { index in
                let (x, y) = (index % width, index / width)
                let inside = (rect.x..<(rect.x + rect.width)).contains(x) && (rect.y..<(rect.y + rect.height)).contains(y)
                return inside ? content : border
            })
    }

    static func bounds(
        _ image: Image, threshold: Double = 10, background: Color? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false
    ) -> [Int]? {
        image.trimmedBounds(threshold: threshold, background: background, equalHorizontal: equalHorizontal, equalVertical: equalVertical)
            .map { [$0.x, $0.y, $0.width, $0.height] }
    }

    @Test("a border of one colour is cut to the content's rectangle, in every format", arguments: PixelFixtures.formats)
    func border(_ format: Image.PixelFormat) {
        let white = [UInt8](repeating: 255, count: format.bytesPerPixel)
        let dark = [UInt8](repeating: 30, count: format.bytesPerPixel - (format.hasAlpha ? 1 : 0)) + (format.hasAlpha ? [255] : [])
        let image = Self.framed(9, 7, format, border: white, content: dark, rect: (2, 1, 4, 3))
        #expect(Self.bounds(image) == [2, 1, 4, 3])
        #expect(Self.bounds(image, background: .white) == [2, 1, 4, 3])
    }

    @Test("a pixel is border when every channel is within the threshold of the background (not more than it)")
    func threshold() {
        // Given a border of (250, 250, 250) and a red content block
        let image = Self.framed(10, 8, .rgb8, border: [250, 250, 250], content: [250, 0, 0], rect: (3, 2, 5, 4))
        // Against white, the border differs by 5 in each channel
        #expect(Self.bounds(image, threshold: 5, background: .white) == [3, 2, 5, 4])
        #expect(Self.bounds(image, threshold: 4.9, background: .white) == [0, 0, 10, 8])
        #expect(Self.bounds(image, threshold: 10, background: .white) == [3, 2, 5, 4])
        // The content differs by 5 in red and 255 in green and blue: only a threshold of 255 makes it border too
        #expect(Self.bounds(image, threshold: 254.5, background: .white) == [3, 2, 5, 4])
        #expect(Self.bounds(image, threshold: 255, background: .white) == nil)
        // Negative keeps everything; NaN counts as 0; infinity makes everything border
        #expect(Self.bounds(image, threshold: -1) == [0, 0, 10, 8])
        #expect(Self.bounds(image, threshold: .nan) == [3, 2, 5, 4])
        #expect(Self.bounds(image, threshold: .infinity) == nil)
    }

    @Test("an explicit background is cut instead of the top-left colour")
    func explicitBackground() {
        // Given a black frame two pixels wide around white, with a blue block inside the white
        let image = P.image(
            10, 9, .rgb8,
            (0..<90).map { index -> [UInt8] in
                let (x, y) = (index % 10, index / 10)
                if x < 2 || x >= 8 || y < 2 || y >= 7 { return [0, 0, 0] }
                if (4..<7).contains(x) && (3..<6).contains(y) { return [0, 0, 255] }
                return [255, 255, 255]
            })
        // The corner's colour is black: the frame goes
        #expect(Self.bounds(image) == [2, 2, 6, 5])
        #expect(Self.bounds(image, background: .black) == [2, 2, 6, 5])
        // White is not the border's colour: nothing is cut
        #expect(Self.bounds(image, background: .white) == [0, 0, 10, 9])
        // The background's alpha is ignored
        #expect(Self.bounds(image, background: Color(red: 0, green: 0, blue: 0, alpha: 0)) == [2, 2, 6, 5])
    }

    @Test("equal sides cut both sides by the smaller of the two cuts")
    func equalSides() {
        // Content at x 1..<5 of 10 (cuts 1 left, 5 right), y 4..<7 of 9 (cuts 4 top, 2 bottom)
        let image = Self.framed(10, 9, .gray8, border: [255], content: [0], rect: (1, 4, 4, 3))
        #expect(Self.bounds(image) == [1, 4, 4, 3])
        #expect(Self.bounds(image, equalHorizontal: true) == [1, 4, 8, 3])
        #expect(Self.bounds(image, equalVertical: true) == [1, 2, 4, 5])
        #expect(Self.bounds(image, equalHorizontal: true, equalVertical: true) == [1, 2, 8, 5])
    }

    @Test("transparent borders, whatever their hidden colour, are trimmed: flattened over magenta")
    func transparentBorders() {
        for clear in [[0, 0, 0, 0], [255, 255, 255, 0], [255, 0, 255, 3]] as [[UInt8]] {
            let image = Self.framed(8, 8, .rgba8, border: clear, content: [0, 255, 0, 255], rect: (2, 3, 3, 4))
            #expect(Self.bounds(image) == [2, 3, 3, 4], "border \(clear)")
            #expect(Self.bounds(image, background: Color(red: 255, green: 0, blue: 255)) == [2, 3, 3, 4])
            // Against white, flattened transparency is magenta, not white: nothing is border
            #expect(Self.bounds(image, background: .white) == [0, 0, 8, 8])
        }
        let gray = Self.framed(7, 6, .grayAlpha8, border: [90, 0], content: [90, 255], rect: (3, 1, 3, 3))
        #expect(Self.bounds(gray) == [3, 1, 3, 3])
    }

    @Test("an image that is all border has no bounds")
    func allBorder() {
        #expect(Self.bounds(P.solid(6, 4, .rgb8, [10, 20, 30])) == nil)
        #expect(Self.bounds(P.solid(6, 4, .rgba8, [10, 20, 30, 0])) == nil)
        #expect(Self.bounds(P.solid(1, 1, .gray8, [0])) == nil)
        #expect(Self.bounds(P.solid(1, 1, .gray8, [0]), background: .white) == [0, 0, 1, 1])
    }

    @Test("isolated noise pixels in the border are ignored (3x3 median), as libvips does")
    func noise() {
        // Given a white border with single dark specks, one touching the content's corner diagonally
        var pixels = Array(repeating: [UInt8](repeating: 255, count: 3), count: 14 * 10)
        for y in 4..<7 { for x in 5..<9 { pixels[y * 14 + x] = [20, 20, 20] } }
        for (x, y) in [(1, 1), (12, 1), (0, 9), (13, 5), (3, 8), (9, 7)] { pixels[y * 14 + x] = [0, 0, 0] }
        let image = P.image(14, 10, .rgb8, pixels)
        #expect(Self.bounds(image) == [5, 4, 4, 3])
        // A 2x2 cluster is noise too (a pixel's 3x3 window holds 4 of its pixels, not 5); a 3x2 one is not:
        // its middle column survives the median, at x 2
        var cluster = pixels
        for (x, y) in [(1, 3), (2, 3), (1, 4), (2, 4)] { cluster[y * 14 + x] = [0, 0, 0] }
        #expect(Self.bounds(P.image(14, 10, .rgb8, cluster)) == [5, 4, 4, 3])
        cluster[3 * 14 + 3] = [0, 0, 0]
        cluster[4 * 14 + 3] = [0, 0, 0]
        #expect(Self.bounds(P.image(14, 10, .rgb8, cluster)) == [2, 3, 7, 4])
    }

    @Test("the median of nine is the fifth smallest, lane by lane")
    func median() {
        var generator = SeededGenerator(seed: 0x3ED1)
        for _ in 0..<2_000 {
            let values = (0..<9).map { _ in SIMD4<Int16>((0..<4).map { _ in Int16.random(in: 0...6, using: &generator) }) }
            let expected = SIMD4<Int16>((0..<4).map { lane in values.map { $0[lane] }.sorted()[4] })
            let median = TrimSampler.median(values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7], values[8])
            #expect(median == expected)
        }
    }

    @Test("random borders and content rectangles: the bounds are the rectangle, equal sides as promised")
    func random() throws {
        var generator = SeededGenerator(seed: 0x7819)
        for _ in 0..<200 {
            let format = P.formats.randomElement(using: &generator)!
            let (width, height) = (Int.random(in: 3...16, using: &generator), Int.random(in: 3...16, using: &generator))
            // A content rectangle of at least 3x3 (smaller ones the median may thin), anywhere
            let (x, y) = (Int.random(in: 0...(width - 3), using: &generator), Int.random(in: 0...(height - 3), using: &generator))
            let rect = (
                x: x, y: y, width: Int.random(in: 3...(width - x), using: &generator), height: Int.random(in: 3...(height - y), using: &generator)
            )
            let level = UInt8.random(in: 0...255, using: &generator)
            let channels = format.bytesPerPixel - (format.hasAlpha ? 1 : 0)
            let border = [UInt8](repeating: level, count: channels) + (format.hasAlpha ? [255] : [])
            let content = [UInt8](repeating: level &+ 128, count: channels) + (format.hasAlpha ? [255] : [])
            let padding = Int.random(in: 0...2, using: &generator)
            let image = Self.framed(width, height, format, padding: padding, border: border, content: content, rect: rect)
            let (equalHorizontal, equalVertical) = (Bool.random(using: &generator), Bool.random(using: &generator))
            let bounds = try #require(
                image.trimmedBounds(
                    threshold: 20, background: Color(red: level, green: level, blue: level), equalHorizontal: equalHorizontal,
                    equalVertical: equalVertical))
            // The cuts on each side, the far ones made equal to the near ones when asked (the smaller of the two)
            var (left, right) = (rect.x, width - rect.x - rect.width)
            var (top, bottom) = (rect.y, height - rect.y - rect.height)
            if equalHorizontal { (left, right) = (min(left, right), min(left, right)) }
            if equalVertical { (top, bottom) = (min(top, bottom), min(top, bottom)) }
            #expect([bounds.x, bounds.y, bounds.width, bounds.height] == [left, top, width - left - right, height - top - bottom])
            // Any threshold and background: inside the image, or nil; never a crash
            let anyBounds = image.trimmedBounds(
                threshold: Double.random(in: -5...300, using: &generator), background: nil, equalHorizontal: equalHorizontal,
                equalVertical: equalVertical)
            if let anyBounds {
                #expect(anyBounds.x >= 0 && anyBounds.y >= 0 && anyBounds.width > 0 && anyBounds.height > 0)
                #expect(anyBounds.x + anyBounds.width <= width && anyBounds.y + anyBounds.height <= height)
            }
        }
    }
}
