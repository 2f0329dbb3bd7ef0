import ImagoSandbox

@testable import ImagoCodecs

/// Small synthetic images written and read pixel by pixel, for tests that
/// check exact values: the reference side of the comparison is the
/// simplest code that can be right.
enum PixelFixtures {
    static let formats: [Image.PixelFormat] = [.gray8, .grayAlpha8, .rgb8, .rgba8]

    /// An image from one byte array per pixel, row by row; `padding`
    /// extra bytes at the end of each row (as some decoders leave).
    static func image(_ width: Int, _ height: Int, _ format: Image.PixelFormat, padding: Int = 0, _ pixels: [[UInt8]]) -> Image {
        precondition(pixels.count == width * height && pixels.allSatisfy { $0.count == format.bytesPerPixel })
        let rowBytes = width * format.bytesPerPixel
        var bytes: [UInt8] = []
        for row in 0..<height {
            bytes += pixels[(row * width)..<((row + 1) * width)].joined()
            bytes += [UInt8](repeating: 0xEE, count: padding)
        }
        return Image(width: width, height: height, pixelFormat: format, bytesPerRow: rowBytes + padding, pixels: bytes)!
    }

    /// An image of one colour.
    static func solid(_ width: Int, _ height: Int, _ format: Image.PixelFormat, _ pixel: [UInt8]) -> Image {
        image(width, height, format, Array(repeating: pixel, count: width * height))
    }

    /// The bytes of the pixel at (x, y).
    static func pixel(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] {
        let start = y * image.bytesPerRow + x * image.pixelFormat.bytesPerPixel
        return Array(image.pixels[start..<(start + image.pixelFormat.bytesPerPixel)])
    }

    /// Every pixel, row by row.
    static func pixels(_ image: Image) -> [[UInt8]] {
        (0..<image.height).flatMap { y in (0..<image.width).map { x in pixel(image, x, y) } }
    }

    /// The pixel at (x, y) as RGBA: gray spread, opaque when there is no alpha.
    static func rgba(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] {
        let bytes = pixel(image, x, y)
        switch image.pixelFormat {
        case .gray8: return [bytes[0], bytes[0], bytes[0], 255]
        case .grayAlpha8: return [bytes[0], bytes[0], bytes[0], bytes[1]]
        case .rgb8: return bytes + [255]
        case .rgba8: return bytes
        }
    }

    /// An image of random bytes (and random row padding) in `format`.
    static func random(_ width: Int, _ height: Int, _ format: Image.PixelFormat, using generator: inout SeededGenerator) -> Image {
        let padding = Int.random(in: 0...3, using: &generator)
        let pixels = (0..<(width * height)).map { _ in (0..<format.bytesPerPixel).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        return image(width, height, format, padding: padding, pixels)
    }

    /// A 3x2 image whose six pixels all differ in every channel: pixel i
    /// (row by row) has channels 10 i + 1, 10 i + 2, ...
    static func distinct(_ format: Image.PixelFormat) -> Image {
        image(3, 2, format, (0..<6).map { index in (0..<format.bytesPerPixel).map { UInt8(10 * index + $0 + 1) } })
    }
}
