import Foundation
import Imago

/// How far an animation's frames are from reference frames, over RGB
/// (0...255 a channel): per pixel, after a 3x3 box blur (what is left of
/// the error once dithering's fine grain is averaged away, as an eye does
/// from a distance: banding), and in the change from each frame to the
/// next (noise that moves: flicker).
struct FrameQuality {
    var meanAbsoluteError = 0.0
    var psnr = 0.0
    var blurredMeanAbsoluteError = 0.0
    var flicker = 0.0

    init(_ frames: [Image], against reference: [Image]) {
        let (actual, expected) = (frames.map(Self.rgb), reference.map(Self.rgb))
        let (width, height) = (reference[0].width, reference[0].height)
        var (absolute, squared, blurred, temporal, count) = (0.0, 0.0, 0.0, 0.0, 0.0)
        for index in expected.indices {
            let (a, e) = (actual[index], expected[index])
            for position in e.indices {
                let difference = Double(a[position]) - Double(e[position])
                absolute += abs(difference)
                squared += difference * difference
                if index > 0 {
                    let change = Double(a[position]) - Double(actual[index - 1][position])
                    let expectedChange = Double(e[position]) - Double(expected[index - 1][position])
                    temporal += abs(change - expectedChange)
                }
            }
            let (blurredA, blurredE) = (Self.boxBlur(a, width, height), Self.boxBlur(e, width, height))
            for position in e.indices { blurred += abs(blurredA[position] - blurredE[position]) }
            count += Double(e.count)
        }
        meanAbsoluteError = absolute / count
        psnr = 10 * log10(255 * 255 / (squared / count))
        blurredMeanAbsoluteError = blurred / count
        flicker = temporal / (count - Double(expected[0].count))
    }

    /// A frame's RGB bytes, row by row.
    static func rgb(_ image: Image) -> [UInt8] {
        let channels = image.pixelFormat.bytesPerPixel
        var output: [UInt8] = []
        output.reserveCapacity(image.width * image.height * 3)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let base = y * image.bytesPerRow + x * channels
                if channels >= 3 {
                    output += image.pixels[base..<(base + 3)]
                } else {
                    output += repeatElement(image.pixels[base], count: 3)
                }
            }
        }
        return output
    }

    /// The mean of each pixel's 3x3 neighbourhood (cut at the edges), RGB.
    static func boxBlur(_ rgb: [UInt8], _ width: Int, _ height: Int) -> [Double] {
        var output = [Double](repeating: 0, count: rgb.count)
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<3 {
                    var (sum, count) = (0.0, 0.0)
                    for dy in -1...1 where (0..<height).contains(y + dy) {
                        for dx in -1...1 where (0..<width).contains(x + dx) {
                            sum += Double(rgb[((y + dy) * width + x + dx) * 3 + channel])
                            count += 1
                        }
                    }
                    output[(y * width + x) * 3 + channel] = sum / count
                }
            }
        }
        return output
    }
}
