import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("SmartCrop: cuts to the size around the salient region")
struct SmartCropTests {
    @Test("the result has the size, holds the object, and keeps a side already within the size")
    func crop() throws {
        // Given a gray image with a saturated square near its top-right corner
        var generator = SeededGenerator(seed: 3)
        var canvas = SaliencyTests.Canvas(width: 600, height: 400, color: [140, 135, 130])
        SaliencyTests.draw(.saturated, in: SaliencyTests.Box(x: 480, y: 30, width: 80, height: 80), on: &canvas, using: &generator)
        let image = canvas.image

        // When it is smart-cropped to 200x200
        let cropped = try #require(ImageProcessors.SmartCrop(size: ImageSize(width: 200, height: 200)).process(image))

        // Then the result is 200x200 and mostly the square's blue
        #expect(cropped.size == ImageSize(width: 200, height: 200))
        let blue = stride(from: 0, to: cropped.pixels.count, by: 3).filter { cropped.pixels[$0 + 2] == 230 }.count
        #expect(blue == 80 * 80)

        // And a side within the size is kept whole; an image within the size is returned as is
        #expect(ImageProcessors.SmartCrop(size: ImageSize(width: 100, height: 900)).process(image)?.size == ImageSize(width: 100, height: 400))
        #expect(ImageProcessors.SmartCrop(size: ImageSize(width: 600, height: 400)).process(image) == image)
        #expect(ImageProcessors.SmartCrop(size: ImageSize(width: 4_000, height: 4_000)).process(image) == image)
    }

    @Test("an empty size gives nil; the identifier names the size; the factory builds the same processor")
    func identity() {
        let image = Image(width: 4, height: 4, pixelFormat: .gray8, pixels: [UInt8](repeating: 9, count: 16))!
        #expect(ImageProcessors.SmartCrop(size: ImageSize(width: 0, height: 10)).process(image) == nil)
        #expect(ImageProcessors.SmartCrop(size: ImageSize(width: 10, height: -1)).process(image) == nil)
        #expect(ImageProcessors.SmartCrop(size: ImageSize(width: 120, height: 80)).identifier == "smartCrop(120x80)")
        let processor: ImageProcessors.SmartCrop = .smartCrop(to: ImageSize(width: 3, height: 2))
        #expect(processor == ImageProcessors.SmartCrop(size: ImageSize(width: 3, height: 2)))
        #expect(processor.process(image)?.size == ImageSize(width: 3, height: 2))
    }
}
