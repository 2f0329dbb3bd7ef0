import Foundation

@testable import ImagoCodecs

/// Frames for the animated encoders' tests, and what the decoders give back.
enum AnimationSamples {
    /// RGBA frames of a 16x16 square moving right 8 pixels a frame, its
    /// colour changing, over a flat background or, with `transparent`, over
    /// nothing. Few colours: GIF keeps them exactly.
    static func movingSquare(frameCount: Int, width: Int = 48, height: Int = 32, transparent: Bool = false) -> [Image] {
        let colors: [[UInt8]] = [[230, 40, 40], [40, 200, 60], [50, 70, 220], [240, 200, 30], [200, 50, 200]]
        return (0..<frameCount).map { index in
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            for y in 0..<height {
                for x in 0..<width {
                    let inSquare = (index * 8..<index * 8 + 16).contains(x) && (8..<24).contains(y)
                    let color: [UInt8] =
                        inSquare ? colors[index % colors.count] + [255] : transparent ? [0, 0, 0, 0] : [250, 250, 245, 255]
                    pixels.replaceSubrange((y * width + x) * 4..<((y * width + x) * 4 + 4), with: color)
                }
            }
            return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)!
        }
    }

    /// Smooth RGB frames of many colours (a gradient moving a few pixels a
    /// frame): GIF has to quantise them.
    static func photoFrames(frameCount: Int, width: Int = 96, height: Int = 64) -> [Image] {
        (0..<frameCount).map { index in
            var pixels = [UInt8](repeating: 0, count: width * height * 3)
            for y in 0..<height {
                for x in 0..<width {
                    let base = (y * width + x) * 3
                    pixels[base] = UInt8((x + index * 3) * 255 / (width + frameCount * 3))
                    pixels[base + 1] = UInt8(y * 255 / (height - 1))
                    pixels[base + 2] = UInt8((x + y) * 255 / (width + height))
                }
            }
            return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)!
        }
    }

    /// Every frame of a decoded image: the image, then the rest of its animation.
    static func frames(of image: Image) throws -> [Image] {
        guard let animation = image.animation else { return [image] }
        let pass = try animation.frames()
        var frames: [Image] = []
        while let frame = try pass.next() { frames.append(frame) }
        return frames
    }

    /// Whether two images show the same pixels, read as RGBA, where
    /// transparent pixels (alpha 0 in `expected`) need only be transparent.
    static func sameRGBA(_ actual: Image, _ expected: Image) -> Bool {
        guard actual.size == expected.size else { return false }
        for y in 0..<actual.height {
            for x in 0..<actual.width {
                let (a, e) = (PixelFixtures.rgba(actual, x, y), PixelFixtures.rgba(expected, x, y))
                if e[3] == 0 ? a[3] != 0 : a != e { return false }
            }
        }
        return true
    }

    /// The mean difference per colour channel, read as RGB.
    static func meanColorError(_ actual: Image, _ expected: Image) -> Double {
        var total = 0
        for y in 0..<actual.height {
            for x in 0..<actual.width {
                let (a, e) = (PixelFixtures.rgba(actual, x, y), PixelFixtures.rgba(expected, x, y))
                for channel in 0..<3 { total += abs(Int(a[channel]) - Int(e[channel])) }
            }
        }
        return Double(total) / Double(actual.width * actual.height * 3)
    }
}
