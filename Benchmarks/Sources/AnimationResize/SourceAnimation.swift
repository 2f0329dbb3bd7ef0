import Foundation
import ImagoCodecFixtures

/// The source GIFs the benchmark resizes, made without Imago's GIF encoder,
/// so that changing the encoder does not change the input: each frame is
/// quantised here (median cut, Floyd–Steinberg dithering), written with
/// LZW codes that compress nothing, and gifsicle (no options) rewrites the
/// file with real compression, as the tool that made a GIF would have.
enum SourceAnimation {
    /// How the frames' colours are chosen.
    enum Palettes: String, CaseIterable {
        /// One colour table for the whole animation, made from a sample of
        /// every frame: what ffmpeg's palettegen and most tools write.
        case global
        /// A table of its own for every frame.
        case local
    }

    /// `frames` (RGB, all one size) as a GIF of `palettes`, each frame shown
    /// for `delay` hundredths of a second, looping forever, compressed by
    /// `gifsicle` (its path) in `folder`.
    static func gif(_ frames: [RGBFrame], palettes: Palettes, delay: Int, gifsicle: String, in folder: URL) throws -> Data {
        var file = GIFBytes(width: frames[0].width, height: frames[0].height)
        switch palettes {
        case .global:
            // Every 4th pixel of every frame, from a different first one each frame.
            var sample: [UInt32] = []
            for (index, frame) in frames.enumerated() { sample += stride(from: index % 4, to: frame.pixels.count, by: 4).map { frame.pixels[$0] } }
            let palette = MedianCut.palette(of: sample, count: 256)
            file.start(globalColors: palette)
            for frame in frames { file.addFrame(Dithering.indices(of: frame, palette: palette), colors: nil, delay: delay) }
        case .local:
            file.start(globalColors: nil)
            for frame in frames {
                let palette = MedianCut.palette(of: frame.pixels, count: 256)
                file.addFrame(Dithering.indices(of: frame, palette: palette), colors: palette, delay: delay)
            }
        }
        let uncompressed = folder.appendingPathComponent("source-\(palettes)-uncompressed.gif")
        let compressed = folder.appendingPathComponent("source-\(palettes).gif")
        try file.finish().write(to: uncompressed)
        try ChildProcess.run(gifsicle, [uncompressed.path, "-o", compressed.path])
        return try Data(contentsOf: compressed)
    }
}

/// An RGB frame, one packed value a pixel (red in the low byte).
struct RGBFrame {
    let width: Int
    let height: Int
    let pixels: [UInt32]

    static func pack(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> UInt32 { UInt32(red) | UInt32(green) << 8 | UInt32(blue) << 16 }

    static func channel(_ pixel: UInt32, _ channel: Int) -> Int { Int(pixel >> (8 * UInt32(channel)) & 0xFF) }
}

/// Heckbert's median cut over a histogram of 5-bit-a-channel cells: the
/// box of cells with the longest side is split at its pixels' median along
/// that side until there are `count` boxes; each box gives the mean colour
/// of its pixels.
enum MedianCut {
    static func palette(of pixels: [UInt32], count: Int) -> [UInt32] {
        // Per cell: pixel count and the sums of red, green and blue.
        var histogram = [Int](repeating: 0, count: 4 << 15)
        for pixel in pixels {
            let (red, green, blue) = (RGBFrame.channel(pixel, 0), RGBFrame.channel(pixel, 1), RGBFrame.channel(pixel, 2))
            let cell = ((red >> 3) << 10 | (green >> 3) << 5 | blue >> 3) * 4
            histogram[cell] += 1
            histogram[cell + 1] += red
            histogram[cell + 2] += green
            histogram[cell + 3] += blue
        }
        var boxes = [(0..<(1 << 15)).filter { histogram[$0 * 4] > 0 }]
        /// A cell's coordinate along `channel` (0 red, 1 green, 2 blue).
        func coordinate(_ cell: Int, _ channel: Int) -> Int { cell >> (10 - 5 * channel) & 31 }
        while boxes.count < count {
            let sides = boxes.map { box in
                (0..<3).map { channel in
                    let values = box.map { coordinate($0, channel) }
                    return (channel: channel, length: values.max()! - values.min()!)
                }.max { $0.length < $1.length }!
            }
            guard let widest = sides.indices.max(by: { sides[$0].length < sides[$1].length }), sides[widest].length > 0 else { break }
            let channel = sides[widest].channel
            let sorted = boxes[widest].sorted { coordinate($0, channel) < coordinate($1, channel) }
            let half = sorted.reduce(0) { $0 + histogram[$1 * 4] } / 2
            var (split, seen) = (1, histogram[sorted[0] * 4])
            while split < sorted.count - 1, seen + histogram[sorted[split] * 4] <= half {
                seen += histogram[sorted[split] * 4]
                split += 1
            }
            boxes[widest] = Array(sorted[..<split])
            boxes.append(Array(sorted[split...]))
        }
        return boxes.map { box in
            let total = box.reduce(0) { $0 + histogram[$1 * 4] }
            let mean = (1...3).map { channel in UInt8((box.reduce(0) { $0 + histogram[$1 * 4 + channel] } + total / 2) / total) }
            return RGBFrame.pack(mean[0], mean[1], mean[2])
        }
    }
}

/// Floyd–Steinberg dithering to a palette, rows left to right, nearest
/// colours by exhaustive search (memoised per 5-bit-a-channel cell, whose
/// centre stands for it).
enum Dithering {
    static func indices(of frame: RGBFrame, palette: [UInt32]) -> [UInt8] {
        let colors = palette.map { (RGBFrame.channel($0, 0), RGBFrame.channel($0, 1), RGBFrame.channel($0, 2)) }
        var nearest = [Int](repeating: -1, count: 1 << 15)
        // Errors in 16ths for this row and the next, three a pixel, one pixel of margin each side.
        let stride = (frame.width + 2) * 3
        var errors = [Int](repeating: 0, count: stride * 2)
        var indices = [UInt8](repeating: 0, count: frame.pixels.count)
        for y in 0..<frame.height {
            let (row, next) = ((y % 2) * stride, ((y + 1) % 2) * stride)
            for position in next..<(next + stride) { errors[position] = 0 }
            for x in 0..<frame.width {
                let pixel = frame.pixels[y * frame.width + x]
                let slot = row + (x + 1) * 3
                let red = min(255, max(0, RGBFrame.channel(pixel, 0) + errors[slot] / 16))
                let green = min(255, max(0, RGBFrame.channel(pixel, 1) + errors[slot + 1] / 16))
                let blue = min(255, max(0, RGBFrame.channel(pixel, 2) + errors[slot + 2] / 16))
                let cell = (red >> 3) << 10 | (green >> 3) << 5 | blue >> 3
                if nearest[cell] < 0 {
                    let centre = (red & ~7 | 4, green & ~7 | 4, blue & ~7 | 4)
                    var best = (index: 0, distance: Int.max)
                    for (index, color) in colors.enumerated() {
                        let (r, g, b) = (color.0 - centre.0, color.1 - centre.1, color.2 - centre.2)
                        if r * r + g * g + b * b < best.distance { best = (index, r * r + g * g + b * b) }
                    }
                    nearest[cell] = best.index
                }
                let index = nearest[cell]
                indices[y * frame.width + x] = UInt8(index)
                let color = colors[index]
                for (channel, error) in [red - color.0, green - color.1, blue - color.2].enumerated() {
                    errors[slot + 3 + channel] += error * 7
                    errors[next + x * 3 + channel] += error * 3
                    errors[next + (x + 1) * 3 + channel] += error * 5
                    errors[next + (x + 2) * 3 + channel] += error
                }
            }
        }
        return indices
    }
}

/// A GIF89a file of full-screen frames of 256-colour tables, its image data
/// in 9-bit LZW codes that compress nothing: a clear code before every
/// 250 literals keeps the decoder's table, and so the code width, small.
struct GIFBytes {
    let width: Int
    let height: Int
    private var bytes: [UInt8] = []

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    mutating func start(globalColors: [UInt32]?) {
        bytes = Array("GIF89a".utf8)
        appendShort(width)
        appendShort(height)
        // A 256-entry global table if any, 8 bits of colour resolution.
        bytes += [globalColors == nil ? 0x70 : 0xF7, 0, 0]
        if let globalColors { appendTable(globalColors) }
        // NETSCAPE2.0: loop forever.
        bytes += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0]
    }

    mutating func addFrame(_ indices: [UInt8], colors: [UInt32]?, delay: Int) {
        bytes += [0x21, 0xF9, 4, 0, UInt8(delay & 0xFF), UInt8(delay >> 8), 0, 0]
        bytes.append(0x2C)
        for value in [0, 0, width, height] { appendShort(value) }
        bytes.append(colors == nil ? 0 : 0x87)
        if let colors { appendTable(colors) }
        bytes += FormatFixtures.uncompressedGIFImageData(indices)
    }

    mutating func finish() -> Data {
        bytes.append(0x3B)
        return Data(bytes)
    }

    private mutating func appendShort(_ value: Int) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }

    private mutating func appendTable(_ colors: [UInt32]) {
        for index in 0..<256 {
            let color = index < colors.count ? colors[index] : 0
            bytes += (0..<3).map { UInt8(RGBFrame.channel(color, $0)) }
        }
    }
}
