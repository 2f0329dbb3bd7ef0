import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("ImageResizer: area averaging without aliasing")
struct ImageResizerTests {
    @Test("a constant image stays constant at any size")
    func constant() throws {
        let image = try #require(Image(width: 37, height: 23, pixelFormat: .rgb8, pixels: [UInt8](repeating: 200, count: 37 * 23 * 3)))
        for size in [ImageSize(width: 5, height: 3), ImageSize(width: 36, height: 22), ImageSize(width: 80, height: 50)] {
            let resized = try #require(ImageResizer.resize(image, to: size))
            #expect(resized.width == size.width && resized.height == size.height)
            #expect(resized.pixels.allSatisfy { $0 == 200 })
        }
    }

    @Test("fine stripes downscaled by a non-integer factor stay within a third of the range of their mean (nearest-neighbour sampling does not)")
    func noAliasing() throws {
        // One-pixel black and white columns, 1000 wide, shrunk to 333.
        let width = 1000, height = 10
        let pixels = (0..<(width * height)).map { UInt8($0 % width % 2 == 0 ? 0 : 255) }
        let image = try #require(Image(width: width, height: height, pixelFormat: .gray8, pixels: pixels))
        let resized = try #require(ImageResizer.resize(image, to: ImageSize(width: 333, height: 3)))
        let mean = resized.pixels.reduce(0.0) { $0 + Double($1) } / Double(resized.pixels.count)
        let deviation = resized.pixels.map { abs(Double($0) - mean) }.max() ?? 0
        #expect(abs(mean - 127.5) < 1.5)
        #expect(deviation <= 43, "largest deviation from the mean: \(deviation)")
        // Nearest-neighbour sampling of the same pattern gives pure black and white: the test can tell.
        let nearest = (0..<333).map { pixels[$0 * width / 333] }
        #expect(nearest.map { abs(Double($0) - 127.5) }.max()! > 120)
    }

    @Test("a 2x2 checkerboard halves to uniform gray; alpha is averaged premultiplied")
    func checkerboardAndAlpha() throws {
        let checker = try #require(Image(width: 2, height: 2, pixelFormat: .gray8, pixels: [0, 255, 255, 0]))
        #expect(ImageResizer.resize(checker, to: ImageSize(width: 1, height: 1))?.pixels == [128])

        // Red opaque next to a transparent green pixel: the result is red, half transparent.
        let edge = try #require(Image(width: 2, height: 1, pixelFormat: .rgba8, pixels: [255, 0, 0, 255, 0, 255, 0, 0]))
        #expect(ImageResizer.resize(edge, to: ImageSize(width: 1, height: 1))?.pixels == [255, 0, 0, 128])
    }

    @Test("fitting keeps the aspect ratio and never enlarges")
    func fitting() {
        #expect(ImageSize(width: 4000, height: 3000).fitting(ImageSize(width: 256, height: 256)) == ImageSize(width: 256, height: 192))
        #expect(ImageSize(width: 300, height: 1200).fitting(ImageSize(width: 100, height: 100)) == ImageSize(width: 25, height: 100))
        #expect(ImageSize(width: 50, height: 40).fitting(ImageSize(width: 100, height: 100)) == ImageSize(width: 50, height: 40))
    }
}
