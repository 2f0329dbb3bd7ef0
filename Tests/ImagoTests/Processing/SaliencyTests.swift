import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("Saliency: the crop window holds the interesting object; flat and uniformly busy images crop at the centre")
struct SaliencyTests {
    /// An rgb8 picture drawn in a test: a background and shapes on it.
    struct Canvas {
        let width: Int
        let height: Int
        var pixels: [UInt8]

        /// A flat background, or one graded gently from `color` at the top-left to `color` + `grade` at the bottom-right.
        init(width: Int, height: Int, color: [Int], grade: [Int] = [0, 0, 0]) {
            self.width = width
            self.height = height
            // The colour along each diagonal x + y, computed once per diagonal.
            let diagonals = (0..<(width + height)).map { sum in
                (0..<3).map { Self.byte(color[$0] + Int((Double(grade[$0]) * Double(sum) / Double(width + height)).rounded())) }
            }
            var pixels = [UInt8](repeating: 0, count: width * height * 3)
            for y in 0..<height {
                for x in 0..<width {
                    let index = (y * width + x) * 3
                    let diagonal = diagonals[x + y]
                    pixels[index] = diagonal[0]
                    pixels[index + 1] = diagonal[1]
                    pixels[index + 2] = diagonal[2]
                }
            }
            self.pixels = pixels
        }

        static func byte(_ value: Int) -> UInt8 { UInt8(max(0, min(255, value))) }

        mutating func set(_ x: Int, _ y: Int, _ color: [Int]) {
            let index = (y * width + x) * 3
            for channel in 0..<3 { pixels[index + channel] = Self.byte(color[channel]) }
        }

        mutating func fill(_ box: Box, _ color: (Int, Int) -> [Int]) {
            for y in box.y..<(box.y + box.height) {
                for x in box.x..<(box.x + box.width) { set(x, y, color(x, y)) }
            }
        }

        /// An ellipse filling `box`.
        mutating func ellipse(_ box: Box, _ color: [Int]) {
            let rx = Double(box.width) / 2
            let ry = Double(box.height) / 2
            for y in box.y..<(box.y + box.height) {
                for x in box.x..<(box.x + box.width) {
                    let dx = (Double(x - box.x) + 0.5 - rx) / rx
                    let dy = (Double(y - box.y) + 0.5 - ry) / ry
                    if dx * dx + dy * dy <= 1 { set(x, y, color) }
                }
            }
        }

        var image: Image { Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)! }
    }

    struct Box: CustomStringConvertible {
        var x: Int
        var y: Int
        var width: Int
        var height: Int

        func contains(_ other: Box) -> Bool {
            other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
        }

        var description: String { "\(width)x\(height)+\(x)+\(y)" }
    }

    enum Object: CaseIterable {
        case texture, skin, saturated, face
    }

    /// Draws `kind` over `box`.
    static func draw(_ kind: Object, in box: Box, on canvas: inout Canvas, using generator: inout SeededGenerator) {
        switch kind {
        case .texture:
            // Gray blotches of 3x3 pixels, darker and lighter than any background used here.
            var shades: [Int] = []
            for _ in 0..<((box.width / 3 + 1) * (box.height / 3 + 1)) { shades.append(Int.random(in: 20...235, using: &generator)) }
            canvas.fill(box) { x, y in
                let shade = shades[((y - box.y) / 3) * (box.width / 3 + 1) + (x - box.x) / 3]
                return [shade, shade, shade]
            }
        case .skin:
            canvas.fill(box) { _, _ in [224, 172, 138] }
        case .saturated:
            canvas.fill(box) { _, _ in [30, 60, 230] }
        case .face:
            canvas.ellipse(box, [205, 150, 118])
            let eye = max(1, box.width / 8)
            canvas.fill(Box(x: box.x + box.width * 3 / 10, y: box.y + box.height * 3 / 8, width: eye, height: eye)) { _, _ in [40, 30, 30] }
            canvas.fill(Box(x: box.x + box.width * 6 / 10, y: box.y + box.height * 3 / 8, width: eye, height: eye)) { _, _ in [40, 30, 30] }
            canvas.fill(Box(x: box.x + box.width * 3 / 10, y: box.y + box.height * 7 / 10, width: box.width * 4 / 10, height: max(1, eye / 2))) {
                _, _ in [150, 60, 60]
            }
        }
    }

    @Test(
        "an object off the centre is inside the window whenever the window can hold it with a cell to spare on each side",
        arguments: [(640, 360), (360, 640), (1024, 576), (300, 200), (200, 300)])
    func objectInWindow(width: Int, height: Int) {
        // The window's position is exact to within a cell of the reduced copy.
        let cell = SaliencyMap.cellSize(forLongestSide: max(width, height))
        var generator = SeededGenerator(seed: UInt64(width * 1_000 + height))
        for trial in 0..<24 {
            // Given an object of random kind, size and place on a flat or gently graded, muted background
            let kind = Object.allCases[trial % Object.allCases.count]
            let shorter = min(width, height)
            let objectWidth = Int.random(in: (shorter / 8)...(shorter / 3), using: &generator)
            let objectHeight = kind == .face ? objectWidth * 5 / 4 : Int.random(in: (shorter / 8)...(shorter / 3), using: &generator)
            let object = Box(
                x: Int.random(in: 0...(width - objectWidth), using: &generator), y: Int.random(in: 0...(height - objectHeight), using: &generator),
                width: objectWidth, height: objectHeight)
            // (A muted background: gray, tinted by at most 10 levels per channel; the grade brightens it by 30 levels.)
            let gray = Int.random(in: 100...150, using: &generator)
            let background = (0..<3).map { _ in gray + Int.random(in: -10...10, using: &generator) }
            let grade = trial % 2 == 0 ? [0, 0, 0] : [30, 30, 30]
            var canvas = Canvas(width: width, height: height, color: background, grade: grade)
            Self.draw(kind, in: object, on: &canvas, using: &generator)
            let image = canvas.image

            for _ in 0..<3 {
                // When a window with at least a cell to spare around the object is placed
                let windowWidth = Int.random(in: min(width, objectWidth + 2 * cell)...width, using: &generator)
                let windowHeight = Int.random(in: min(height, objectHeight + 2 * cell)...height, using: &generator)
                let corner = Saliency.bestCrop(in: image, width: windowWidth, height: windowHeight)

                // Then it lies in the image and holds the whole object
                let window = Box(x: corner.x, y: corner.y, width: windowWidth, height: windowHeight)
                #expect(Box(x: 0, y: 0, width: width, height: height).contains(window))
                #expect(window.contains(object), "\(kind) at \(object) in \(width)x\(height), window \(window)")
            }
        }
    }

    @Test("a flat image crops at the centre, in every pixel format", arguments: [Image.PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8])
    func flat(format: Image.PixelFormat) {
        // Given flat images, gray and coloured (a skin tone and a saturated blue are as flat as gray)
        for color: [UInt8] in [[128, 128, 128, 255], [224, 172, 138, 255], [30, 60, 230, 200]] {
            let channels = format.bytesPerPixel
            let pixel = channels >= 3 ? Array(color.prefix(channels)) : channels == 2 ? [color[0], color[3]] : [color[0]]
            var pixels = [UInt8](repeating: 0, count: 500 * 300 * channels)
            for channel in 0..<channels {
                for index in stride(from: channel, to: pixels.count, by: channels) { pixels[index] = pixel[channel] }
            }
            let image = Image(width: 500, height: 300, pixelFormat: format, pixels: pixels)!
            for (width, height) in [(100, 100), (333, 77), (499, 299), (1, 1), (250, 300)] {
                // When a window is placed
                let corner = Saliency.bestCrop(in: image, width: width, height: height)

                // Then it is the centred one
                #expect(corner.x == (500 - width) / 2 && corner.y == (300 - height) / 2, "\(color) \(width)x\(height): \(corner)")
            }
        }
    }

    @Test("uniform noise crops at the centre, within two pixels", arguments: [(800, 600), (600, 800), (257, 131)])
    func noise(width: Int, height: Int) {
        var generator = SeededGenerator(seed: UInt64(width + height))
        for colored in [false, true] {
            // Given an image of independent random pixels, gray or coloured
            let pixels = (0..<(width * height)).flatMap { _ -> [UInt8] in
                let gray = UInt8.random(in: 0...255, using: &generator)
                return colored ? [gray, .random(in: 0...255, using: &generator), .random(in: 0...255, using: &generator)] : [gray, gray, gray]
            }
            let image = Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)!
            for (windowWidth, windowHeight) in [(width / 2, height / 2), (width / 4, height * 3 / 4), (width - 40, 64), (64, 64)] {
                // When a window is placed
                let corner = Saliency.bestCrop(in: image, width: windowWidth, height: windowHeight)

                // Then it is about the centred one
                #expect(abs(corner.x - (width - windowWidth) / 2) <= 2, "\(windowWidth)x\(windowHeight): \(corner)")
                #expect(abs(corner.y - (height - windowHeight) / 2) <= 2, "\(windowWidth)x\(windowHeight): \(corner)")
            }
        }
    }

    @Test("a window as large as the image, or larger, is at (0, 0); a larger side is clamped to the image")
    func wholeImage() {
        // Given a busy image with an object at the right
        var generator = SeededGenerator(seed: 7)
        var canvas = Canvas(width: 300, height: 200, color: [120, 120, 120])
        Self.draw(.saturated, in: Box(x: 240, y: 60, width: 40, height: 40), on: &canvas, using: &generator)
        let image = canvas.image

        // When the window covers it, then the corner is the origin
        #expect(Saliency.bestCrop(in: image, width: 300, height: 200) == (0, 0))
        #expect(Saliency.bestCrop(in: image, width: 5_000, height: Int.max) == (0, 0))

        // When only the height covers it, then y is 0 and x still finds the object
        let wide = Saliency.bestCrop(in: image, width: 100, height: 900)
        #expect(wide.y == 0 && wide.x <= 240 && wide.x + 100 >= 280)
    }

    @Test("degenerate inputs do not trap: 1x1 and one-row images, empty and huge windows, padded rows, alpha")
    func degenerate() {
        // Given tiny, thin, padded and transparent images
        let images = [
            Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [7])!,
            Image(width: 1, height: 1, pixelFormat: .rgba8, pixels: [1, 2, 3, 0])!,
            Image(width: 2_000, height: 1, pixelFormat: .grayAlpha8, pixels: (0..<4_000).map { UInt8($0 % 256) })!,
            Image(width: 1, height: 900, pixelFormat: .rgb8, pixels: (0..<2_700).map { UInt8($0 % 251) })!,
            Image(width: 5, height: 4, pixelFormat: .rgb8, bytesPerRow: 17, pixels: (0..<68).map { UInt8($0 * 3 % 256) })!,
            Image(width: 90, height: 70, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 90 * 70 * 4))!,
        ]
        for image in images {
            for (width, height) in [(0, 0), (-5, 3), (1, 1), (Int.max, Int.min), (Int.min, Int.max), (image.width, 1), (3, image.height + 1)] {
                // When a window is placed
                let corner = Saliency.bestCrop(in: image, width: width, height: height)

                // Then the clamped window lies in the image
                let clampedWidth = max(1, min(width, image.width))
                let clampedHeight = max(1, min(height, image.height))
                #expect(corner.x >= 0 && corner.x + clampedWidth <= image.width, "\(image) \(width)x\(height): \(corner)")
                #expect(corner.y >= 0 && corner.y + clampedHeight <= image.height, "\(image) \(width)x\(height): \(corner)")
            }
        }
    }

    @Test("colour hidden under transparent pixels counts for nothing; the opaque object does")
    func transparency() {
        // Given an opaque gray image whose left part is transparent saturated red, with a textured block at the right
        var generator = SeededGenerator(seed: 11)
        var canvas = Canvas(width: 400, height: 200, color: [128, 128, 128])
        canvas.fill(Box(x: 0, y: 0, width: 120, height: 200)) { _, _ in [255, 0, 0] }
        Self.draw(.texture, in: Box(x: 300, y: 70, width: 60, height: 60), on: &canvas, using: &generator)
        var pixels: [UInt8] = []
        for index in 0..<(400 * 200) {
            pixels.append(contentsOf: canvas.pixels[(index * 3)..<(index * 3 + 3)])
            pixels.append(index % 400 < 120 ? 0 : 255)
        }
        let image = Image(width: 400, height: 200, pixelFormat: .rgba8, pixels: pixels)!

        // When a 120x120 window is placed
        let corner = Saliency.bestCrop(in: image, width: 120, height: 120)

        // Then it holds the block, not the hidden red
        #expect(Box(x: corner.x, y: corner.y, width: 120, height: 120).contains(Box(x: 300, y: 70, width: 60, height: 60)), "\(corner)")
    }

    @Test("the window positions tried include the centre, both ends and every cell-boundary alignment, once each")
    func candidates() {
        // Cells of 16 pixels, the last 20 (pixels 80-99).
        let positions = Saliency.candidates(length: 100, window: 30, cellSize: 16, cells: 6)
        #expect(positions.first == 35)
        #expect(Set(positions).count == positions.count)
        #expect(Set(positions) == [35, 0, 70, 16, 32, 48, 64, 2, 18, 34, 50])
        #expect(positions.allSatisfy { (0...70).contains($0) })
    }
}

@Suite("SaliencyMap: the median that measures how uniformly busy an image is")
struct SaliencyMapTests {
    @Test("the quickselect median is the sorted array's middle element, for any order and duplicates")
    func median() {
        var generator = SeededGenerator(seed: 23)
        for count in [1, 2, 3, 4, 5, 10, 101, 1_000] {
            for _ in 0..<20 {
                // Given values in random order, with many repeats
                var values = (0..<count).map { _ in Float(Int.random(in: 0...9, using: &generator)) / 4 }
                let expected = values.sorted()[count / 2]

                // When the median is selected, then it is the sorted middle
                #expect(SaliencyMap.median(&values) == expected)
            }
        }
        var empty: [Float] = []
        #expect(SaliencyMap.median(&empty) == 0)
    }
}
