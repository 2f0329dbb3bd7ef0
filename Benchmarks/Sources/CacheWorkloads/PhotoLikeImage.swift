import Foundation
import Imago
import ImagoSandbox

/// A photo-like JPEG. With the defaults, the image of about 20 KB (300x225,
/// gradient and 40 seeded discs, quality 92) every throughput benchmark
/// loads, so that their figures compare; see ``photoLikeImage(width:height:seed:discs:detail:)``
/// for the parameters.
public func photoLikeJPEG(
    width: Int = 300, height: Int = 225, seed: UInt64 = 20, discs: Int = 40, detail: Int = 0, quality: Int = 92
) throws -> Data {
    try JPEGEncoder(quality: quality).encode(photoLikeImage(width: width, height: height, seed: seed, discs: discs, detail: detail))
}

/// A photo-like RGB image: a vertical gradient under `discs` discs of seeded
/// colours, positions and radii (5 to 40 pixels at 300 wide, in proportion
/// to the width), and, with `detail` above 0, texture.
///
/// Flat discs compress far better than a photo, and a JPEG's decode time
/// follows its compressed size, so large images need `detail`: brightness
/// noise at wavelengths of 64, 16 and 4 pixels (amplitudes `detail`,
/// `detail` / 2 and `detail` / 4 levels) plus per-pixel grain of up to
/// `detail` / 4 levels, which gives a 1/f-like spectrum, as photos have.
/// The seed changes the discs and the texture, so each seed is a different picture.
public func photoLikeImage(width: Int = 300, height: Int = 225, seed: UInt64 = 20, discs: Int = 40, detail: Int = 0) throws -> Image {
    var canvas = Canvas(width: width, height: height, background: (40, 90, 160))
    canvas.fillVerticalGradient(top: (250, 180, 60), bottom: (20, 40, 120))
    var generator = SeededGenerator(seed: seed)
    let smallest = max(1, 5 * width / 300)
    let largest = max(smallest, 40 * width / 300)
    for _ in 0..<discs {
        let color = (
            UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator)
        )
        canvas.fillCircle(
            centerX: Int.random(in: 0..<width, using: &generator), centerY: Int.random(in: 0..<height, using: &generator),
            radius: Int.random(in: smallest...largest, using: &generator), color: color)
    }
    guard let flat = canvas.image else { throw CocoaError(.coderInvalidValue) }
    guard detail > 0 else { return flat }
    var pixels = flat.pixels
    addTexture(to: &pixels, width: flat.width, height: flat.height, detail: Float(detail), generator: &generator)
    guard let textured = Image(width: flat.width, height: flat.height, pixelFormat: .rgb8, pixels: pixels) else {
        throw CocoaError(.coderInvalidValue)
    }
    return textured
}

/// Adds value noise at three scales and grain to the brightness of RGB `pixels`.
private func addTexture(to pixels: inout [UInt8], width: Int, height: Int, detail: Float, generator: inout SeededGenerator) {
    let octaves = [(spacing: 64, amplitude: detail), (spacing: 16, amplitude: detail / 2), (spacing: 4, amplitude: detail / 4)].map { octave in
        ValueNoise(width: width, height: height, spacing: octave.spacing, amplitude: octave.amplitude, generator: &generator)
    }
    let grain = detail / 4
    var offsets = [Float](repeating: 0, count: width)
    pixels.withUnsafeMutableBufferPointer { output in
        for y in 0..<height {
            for index in offsets.indices { offsets[index] = 0 }
            for octave in octaves { octave.add(row: y, to: &offsets) }
            for x in 0..<width {
                // 24 random bits are plenty for a uniform -1..<1.
                let noise = Float(generator.next() >> 40) / Float(1 << 23) - 1
                let offset = offsets[x] + noise * grain
                let pixel = (y * width + x) * 3
                for channel in 0..<3 {
                    output[pixel + channel] = UInt8(max(0, min(255, (Float(output[pixel + channel]) + offset).rounded())))
                }
            }
        }
    }
}

/// Random values on a square lattice, interpolated smoothly in between.
private struct ValueNoise {
    let spacing: Int
    let columns: Int
    let lattice: [Float]
    /// For each x: the lattice column left of it and the smoothed weight of the one right of it.
    let cells: [(column: Int, weight: Float)]

    init(width: Int, height: Int, spacing: Int, amplitude: Float, generator: inout SeededGenerator) {
        self.spacing = spacing
        columns = width / spacing + 2
        let rows = height / spacing + 2
        lattice = (0..<columns * rows).map { _ in Float.random(in: -amplitude...amplitude, using: &generator) }
        cells = (0..<width).map { x in (x / spacing, Self.smooth(Float(x % spacing) / Float(spacing))) }
    }

    static func smooth(_ t: Float) -> Float { t * t * (3 - 2 * t) }

    func add(row y: Int, to offsets: inout [Float]) {
        let top = (y / spacing) * columns
        let bottom = top + columns
        let fy = Self.smooth(Float(y % spacing) / Float(spacing))
        lattice.withUnsafeBufferPointer { lattice in
            for (x, cell) in cells.enumerated() {
                let upper = lattice[top + cell.column] + (lattice[top + cell.column + 1] - lattice[top + cell.column]) * cell.weight
                let lower = lattice[bottom + cell.column] + (lattice[bottom + cell.column + 1] - lattice[bottom + cell.column]) * cell.weight
                offsets[x] += upper + (lower - upper) * fy
            }
        }
    }
}
