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
        let width = 1000
        let height = 10
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

    @Test(
        "every pixel format matches a plain double-precision area average (exactly without alpha), shrinking and enlarging",
        arguments: [
            Image.PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8,
        ])
    func matchesReference(format: Image.PixelFormat) throws {
        let channels = format.bytesPerPixel
        let width = 61
        let height = 47
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let pixels = (0..<(width * height * channels)).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let image = try #require(Image(width: width, height: height, pixelFormat: format, pixels: pixels))
        for size in [ImageSize(width: 31, height: 24), ImageSize(width: 13, height: 9), ImageSize(width: 90, height: 70)] {
            let resized = try #require(ImageResizer.resize(image, to: size))
            let expected = Self.reference(pixels, width: width, height: height, channels: channels, hasAlpha: format.hasAlpha, to: size)
            let differences = zip(resized.pixels, expected).map { abs(Int($0) - Int($1)) }
            let worst = differences.max() ?? 0
            let mismatches = differences.filter { $0 > 0 }.count
            #expect(resized.pixels.count == expected.count)
            // Float sums: exact without alpha; with it, the division by the
            // coverage may round the other way, rarely and by 1.
            #expect(worst <= 1, "\(format) to \(size): off by \(worst)")
            #expect(format.hasAlpha ? mismatches * 100 <= differences.count : mismatches == 0, "\(format) to \(size): \(mismatches) bytes differ")
        }
    }

    /// Each target pixel as the average of the source area it covers,
    /// weighted by how much of each source pixel it covers, colour
    /// premultiplied by alpha: computed pixel by pixel, in Double.
    static func reference(
        _ pixels: [UInt8], width: Int, height: Int, channels: Int, hasAlpha: Bool, to size: ImageSize
    ) -> [UInt8] {
        func coverage(_ target: Int, _ source: Int, count: Int, of sourceCount: Int) -> Double {
            let scale = Double(sourceCount) / Double(count)
            let start = Double(target) * scale
            let end = start + scale
            return max(0, min(end, Double(source + 1)) - max(start, Double(source))) / scale
        }
        var output: [UInt8] = []
        for y in 0..<size.height {
            for x in 0..<size.width {
                var sums = [Double](repeating: 0, count: channels)
                for sy in 0..<height {
                    let wy = coverage(y, sy, count: size.height, of: height)
                    guard wy > 0 else { continue }
                    for sx in 0..<width {
                        let weight = wy * coverage(x, sx, count: size.width, of: width)
                        guard weight > 0 else { continue }
                        let base = (sy * width + sx) * channels
                        let alpha = hasAlpha ? Double(pixels[base + channels - 1]) / 255 : 1
                        for c in 0..<channels {
                            let isAlpha = hasAlpha && c == channels - 1
                            sums[c] += Double(pixels[base + c]) * (isAlpha ? 1 : alpha) * weight
                        }
                    }
                }
                let alpha = hasAlpha ? sums[channels - 1] / 255 : 1
                for c in 0..<channels {
                    let isAlpha = hasAlpha && c == channels - 1
                    let value = isAlpha ? sums[c] : (alpha > 0 ? sums[c] / alpha : 0)
                    output.append(UInt8(max(0, min(255, value.rounded()))))
                }
            }
        }
        return output
    }

    @Test("fitting keeps the aspect ratio and never enlarges")
    func fitting() {
        #expect(ImageSize(width: 4000, height: 3000).fitting(ImageSize(width: 256, height: 256)) == ImageSize(width: 256, height: 192))
        #expect(ImageSize(width: 300, height: 1200).fitting(ImageSize(width: 100, height: 100)) == ImageSize(width: 25, height: 100))
        #expect(ImageSize(width: 50, height: 40).fitting(ImageSize(width: 100, height: 100)) == ImageSize(width: 50, height: 40))
    }
}
