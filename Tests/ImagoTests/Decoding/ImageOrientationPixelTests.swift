import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("EXIF orientation transforms: every pixel of every format lands where the tag's definition puts it")
struct ImageOrientationPixelTests {
    /// Where the pixel shown at (x, y) comes from in a stored image of
    /// `width` x `height`, from the EXIF definitions of the eight values
    /// (1: row 0 at the top, column 0 on the left; 6: row 0 on the right,
    /// column 0 at the top; and so on).
    static func stored(_ orientation: ImageOrientation, x: Int, y: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        switch orientation {
        case .up: (x, y)
        case .upMirrored: (width - 1 - x, y)
        case .down: (width - 1 - x, height - 1 - y)
        case .downMirrored: (x, height - 1 - y)
        case .leftMirrored: (y, x)
        case .right: (y, height - 1 - x)
        case .rightMirrored: (width - 1 - y, height - 1 - x)
        case .left: (width - 1 - y, x)
        }
    }

    @Test("random sizes, formats and row paddings, all eight orientations")
    func everyPixel() throws {
        var generator = SeededGenerator(seed: 0x0E1F)
        for _ in 0..<60 {
            let format = PixelFixtures.formats.randomElement(using: &generator)!
            let image = PixelFixtures.random(
                Int.random(in: 1...9, using: &generator), Int.random(in: 1...9, using: &generator), format, using: &generator)
            for value in 1...8 {
                let orientation = try #require(ImageOrientation(rawValue: value))
                let upright = orientation.apply(to: image)
                #expect(upright.size == (orientation.swapsDimensions ? image.size.transposed : image.size))
                #expect(upright.pixelFormat == format)
                for y in 0..<upright.height {
                    for x in 0..<upright.width {
                        let source = Self.stored(orientation, x: x, y: y, width: image.width, height: image.height)
                        #expect(PixelFixtures.pixel(upright, x, y) == PixelFixtures.pixel(image, source.x, source.y))
                    }
                }
            }
        }
    }
}
