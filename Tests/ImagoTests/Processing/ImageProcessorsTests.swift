import Foundation
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("Processors: resize, crop, rounded corners, circle, blur, grayscale; stable identifiers")
struct ImageProcessorsTests {
    static func solid(_ width: Int, _ height: Int, _ color: [UInt8]) -> Image {
        let format: Image.PixelFormat = color.count == 4 ? .rgba8 : .rgb8
        return Image(width: width, height: height, pixelFormat: format, pixels: Array(repeatElement(color, count: width * height).joined()))!
    }

    @Test("resize fills or fits without enlarging; crop cuts a filled image to the size, centred")
    func resize() throws {
        let image = FormatFixtures.quadrants(width: 400, height: 200)
        let size = ImageSize(width: 100, height: 100)
        #expect(ImageProcessors.Resize(size: size).process(image)?.size == ImageSize(width: 200, height: 100))
        #expect(ImageProcessors.Resize(size: size, contentMode: .fit).process(image)?.size == ImageSize(width: 100, height: 50))
        let cropped = try #require(ImageProcessors.Resize(size: size, crop: true).process(image))
        #expect(cropped.size == size)
        // The centre column of the filled 200x100 image is the quadrants' boundary: left red, right green.
        #expect(FormatFixtures.rgba(cropped, x: 10, y: 10) == [255, 0, 0, 255])
        #expect(FormatFixtures.rgba(cropped, x: 90, y: 10) == [0, 255, 0, 255])
        #expect(ImageProcessors.Resize(size: ImageSize(width: 800, height: 800)).process(image)?.size == image.size)
        #expect(ImageProcessors.Resize(size: ImageSize(width: 0, height: 10)).process(image) == nil)
    }

    @Test("crop copies exactly the rectangle, clipped to the image; nothing left is nil")
    func crop() throws {
        let image = FormatFixtures.quadrants(width: 8, height: 6, alpha: true)
        let cropped = try #require(ImageProcessors.Crop(x: 3, y: 2, width: 3, height: 3).process(image))
        #expect(cropped.size == ImageSize(width: 3, height: 3))
        for y in 0..<3 {
            for x in 0..<3 { #expect(FormatFixtures.rgba(cropped, x: x, y: y) == FormatFixtures.rgba(image, x: x + 3, y: y + 2)) }
        }
        #expect(ImageProcessors.Crop(x: 6, y: -2, width: 10, height: 4).process(image)?.size == ImageSize(width: 2, height: 2))
        #expect(ImageProcessors.Crop(x: 8, y: 0, width: 2, height: 2).process(image) == nil)
        #expect(ImageProcessors.Crop(x: Int.max, y: 0, width: Int.max, height: 2).process(image) == nil)
    }

    @Test("rounded corners and circles clear the corners, keep the middle, and ramp the edge")
    func rounding() throws {
        let image = Self.solid(40, 40, [10, 20, 30])
        let rounded = try #require(ImageProcessors.RoundedCorners(radius: 10).process(image))
        #expect(rounded.pixelFormat == .rgba8)
        #expect(FormatFixtures.rgba(rounded, x: 0, y: 0)[3] == 0)
        #expect(FormatFixtures.rgba(rounded, x: 20, y: 0) == [10, 20, 30, 255], "straight edges stay")
        #expect(FormatFixtures.rgba(rounded, x: 20, y: 20) == [10, 20, 30, 255])
        let circle = try #require(ImageProcessors.RoundedCorners.circle().process(image))
        #expect(FormatFixtures.rgba(circle, x: 0, y: 0)[3] == 0)
        #expect(FormatFixtures.rgba(circle, x: 3, y: 3)[3] == 0)
        #expect(FormatFixtures.rgba(circle, x: 20, y: 0)[3] > 240, "the circle touches the top edge")
        #expect(FormatFixtures.rgba(circle, x: 20, y: 20)[3] == 255)
        let edge = (0..<40).map { FormatFixtures.rgba(circle, x: $0, y: 6)[3] }
        #expect(edge.contains { $0 > 0 && $0 < 255 }, "anti-aliased: partial coverage on the edge")
        #expect(edge == edge.reversed(), "symmetric")
    }

    @Test("blur keeps flat areas flat and spreads a dot symmetrically; transparent colour does not bleed")
    func blur() throws {
        let flat = Self.solid(16, 16, [90, 120, 200])
        #expect(ImageProcessors.GaussianBlur(radius: 4).process(flat) == flat)
        for radius in [Double.infinity, .nan, -3, 1e9] {
            #expect(ImageProcessors.GaussianBlur(radius: radius).process(flat) == flat, "radius \(radius)")
        }

        var pixels = [UInt8](repeating: 0, count: 21 * 21)
        pixels[10 * 21 + 10] = 255
        let dot = Image(width: 21, height: 21, pixelFormat: .gray8, pixels: pixels)!
        let blurred = try #require(ImageProcessors.GaussianBlur(radius: 4).process(dot))
        let row = (0..<21).map { blurred.pixels[10 * 21 + $0] }
        #expect(row == row.reversed())
        #expect(row[10] < 255 && row[10] > row[12] && row[12] > row[14] && row[13] > 0)

        // Half opaque blue, half fully transparent red: no red may appear.
        var mixed = Self.solid(16, 4, [0, 0, 255, 255])
        mixed = Image(
            width: 16, height: 4, pixelFormat: .rgba8, pixels: (0..<64).flatMap { $0 % 16 < 8 ? [UInt8(0), 0, 255, 255] : [255, 0, 0, 0] })!
        let softened = try #require(ImageProcessors.GaussianBlur(radius: 3).process(mixed))
        for x in 0..<16 {
            let pixel = FormatFixtures.rgba(softened, x: x, y: 2)
            if pixel[3] > 0 { #expect(pixel[0] == 0 && pixel[2] == 255, "x \(x): \(pixel)") }
        }
    }

    @Test("grayscale uses Rec. 709 weights and keeps alpha")
    func grayscale() throws {
        let red = try #require(ImageProcessors.Grayscale().process(Self.solid(2, 2, [255, 0, 0, 77])))
        #expect(red.pixelFormat == .grayAlpha8)
        #expect(Array(red.pixels.prefix(2)) == [54, 77])
        let green = try #require(ImageProcessors.Grayscale().process(Self.solid(2, 2, [0, 255, 0])))
        #expect(green.pixelFormat == .gray8 && green.pixels[0] == 182)
    }

    @Test("identifiers name the operation and every parameter")
    func identifiers() {
        let processors: [any ImageProcessing] = [
            .resize(to: ImageSize(width: 10, height: 20)), .resize(to: ImageSize(width: 10, height: 20), crop: true),
            .resize(to: ImageSize(width: 10, height: 20), contentMode: .fit), .crop(x: 1, y: 2, width: 3, height: 4),
            .roundedCorners(radius: 8), .roundedCorners(radius: 9), .circle(), .gaussianBlur(radius: 2), .gaussianBlur(), .grayscale,
        ]
        let identifiers = processors.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
        #expect(identifiers[0] == "resize(10x20,fill)")
        #expect(identifiers == processors.map(\.identifier), "stable")
    }
}
