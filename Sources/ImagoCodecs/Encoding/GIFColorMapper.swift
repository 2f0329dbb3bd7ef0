/// Maps pixels to a fixed palette of at most 255 colours, the index after
/// them kept for transparency, with serpentine Floyd–Steinberg dithering.
///
/// An animation's frames share one mapper, so that one palette made by
/// libimagequant serves many frames: the nearest colour of a pixel comes
/// from a cache of cells of 6 bits a channel, each looked up in the
/// palette the first time a pixel falls in it (the cell's centre stands for
/// it; dithering carries the difference on).
///
/// The mapping of a pixel depends only on the pixels before it in the same
/// frame, never on earlier frames: the same pixels give the same indices
/// whenever they come. The error carried to a pixel is halved when it is
/// longer than twice the palette's typical gap between neighbouring colours,
/// where no colour near the pixel can pay it back (outside the palette's
/// hull, or past its edge): left alone it would spread in streaks.
final class GIFColorMapper {
    /// The opaque colours, RGB; 1 to 255.
    let colors: [(red: UInt8, green: UInt8, blue: UInt8)]
    /// The colours as Int32 triples, for the inner loop.
    private let entries: UnsafeMutableBufferPointer<Int32>
    /// The colours' indices in order of red + green + blue, and those sums:
    /// a search for the nearest colour starts at the sum of the colour
    /// sought and stops where the sums alone are further than the best found.
    private let bySum: UnsafeMutableBufferPointer<(sum: Int32, index: Int32)>
    /// The nearest colour of each cell of 6 bits a channel, or `unknown`
    /// (which no colour's index is: there are at most 255).
    private let cells: UnsafeMutableBufferPointer<UInt8>
    private static let unknown: UInt8 = 0xFF
    /// The squared length of carried error past which it is halved.
    let dampingThreshold: Int32

    /// A mapper to `colors`, of which only the first 255 are used (black
    /// if there are none).
    init(colors: [(red: UInt8, green: UInt8, blue: UInt8)]) {
        let colors = colors.isEmpty ? [(0, 0, 0)] : Array(colors.prefix(255))
        self.colors = colors
        let triples = colors.flatMap { [Int32($0.red), Int32($0.green), Int32($0.blue)] }
        entries = .allocate(capacity: triples.count)
        _ = entries.initialize(from: triples)
        let sums = colors.enumerated().map { (sum: Int32($1.red) + Int32($1.green) + Int32($1.blue), index: Int32($0)) }
        bySum = .allocate(capacity: sums.count)
        _ = bySum.initialize(from: sums.sorted { $0 < $1 })
        cells = .allocate(capacity: 1 << 18)
        cells.initialize(repeating: Self.unknown)
        dampingThreshold = max(Self.minimumDampingThreshold, 4 * Self.typicalGap(triples))
    }

    deinit {
        entries.deallocate()
        bySum.deallocate()
        cells.deallocate()
    }

    /// The index drawn as transparent: the one after the colours.
    var transparentIndex: Int { colors.count }

    /// The colour table of every palette this mapper makes: the colours,
    /// then black for transparency.
    var table: [(red: UInt8, green: UInt8, blue: UInt8)] { colors + [(0, 0, 0)] }

    /// A frame mapped, and how well the palette fits it.
    struct Mapping {
        var palette: GIFPalette
        /// The mean over opaque pixels of the squared RGB distance from each
        /// pixel to the palette's colour nearest to it (without dithering,
        /// which spreads the error rather than removing it), over a quarter
        /// of them (every other of every other row); 0 if none is opaque.
        var meanSquaredError: Double
    }

    /// `pixels` (``GIFPixels`` values, `width` by `height`) as indices into
    /// ``table``, dithered by `dithering` (0...1). Transparent pixels take
    /// ``transparentIndex`` and neither take nor pass on error: what shows
    /// under them is another frame's.
    func map(_ pixels: [UInt32], width: Int, height: Int, dithering: Float) -> Mapping {
        var indices = [UInt8](repeating: UInt8(transparentIndex), count: pixels.count)
        // The share of the error passed on, in 256ths.
        let strength = Int32((min(1, max(0, dithering)) * 256).rounded())
        // Errors passed to this row and the next, in 16ths, RGB, with one
        // pixel of margin on each side so that the edges need no test.
        let rowLength = (width + 2) * 3
        let errors = UnsafeMutableBufferPointer<Int32>.allocate(capacity: rowLength * 2)
        defer { errors.deallocate() }
        errors.initialize(repeating: 0)
        var squaredError = 0
        var fitCount = 0
        var opaqueCount = 0
        let (threshold, entries) = (dampingThreshold, self.entries)
        // Arithmetic in the loop wraps rather than checks for overflow: no
        // value comes near Int32's limits (errors stay within 16 × 7 × 510).
        pixels.withUnsafeBufferPointer { pixels in
            indices.withUnsafeMutableBufferPointer { indices in
                for y in 0..<height {
                    // Serpentine: odd rows run right to left, so that the
                    // error does not drift one way.
                    let forward = y & 1 == 0
                    let step = forward ? 3 : -3
                    let row = (y & 1) * rowLength
                    let next = rowLength - row
                    for slot in next..<(next + rowLength) { errors[slot] = 0 }
                    // The error passed ahead, 7/16 of the last pixel's, in
                    // 16ths: kept here rather than in `errors`, the shortest
                    // way from one pixel to the next.
                    var ahead: (Int32, Int32, Int32) = (0, 0, 0)
                    for count in 0..<width {
                        let x = forward ? count : width - 1 - count
                        let pixel = pixels[y * width + x]
                        guard pixel != GIFPixels.transparent else {
                            ahead = (0, 0, 0)
                            continue
                        }
                        let red = Int32(pixel & 0xFF)
                        let green = Int32(pixel >> 8 & 0xFF)
                        let blue = Int32(pixel >> 16 & 0xFF)
                        // The fit is measured on every other pixel of every
                        // other row: a lookup less for the rest.
                        if (x | y) & 1 == 0 {
                            let own = nearest(red, green, blue) &* 3
                            let miss = (red &- entries[own], green &- entries[own + 1], blue &- entries[own + 2])
                            squaredError &+= Int(miss.0 &* miss.0 &+ miss.1 &* miss.1 &+ miss.2 &* miss.2)
                            fitCount &+= 1
                        }
                        opaqueCount &+= 1
                        let slot = row &+ (x &+ 1) &* 3
                        var carried = (
                            ((errors[slot] &+ ahead.0) &* strength &+ 2048) >> 12, ((errors[slot + 1] &+ ahead.1) &* strength &+ 2048) >> 12,
                            ((errors[slot + 2] &+ ahead.2) &* strength &+ 2048) >> 12
                        )
                        // Selected rather than branched on: which way it goes is hard to predict.
                        let damped = carried.0 &* carried.0 &+ carried.1 &* carried.1 &+ carried.2 &* carried.2 > threshold
                        carried = (damped ? carried.0 / 2 : carried.0, damped ? carried.1 / 2 : carried.1, damped ? carried.2 / 2 : carried.2)
                        let target = (
                            min(255, max(0, red &+ carried.0)), min(255, max(0, green &+ carried.1)), min(255, max(0, blue &+ carried.2))
                        )
                        let index = nearest(target.0, target.1, target.2)
                        indices[y * width + x] = UInt8(truncatingIfNeeded: index)
                        let entry = index &* 3
                        let error = (target.0 &- entries[entry], target.1 &- entries[entry + 1], target.2 &- entries[entry + 2])
                        // 7/16 ahead, 3/16 behind below, 5/16 below, 1/16 ahead below.
                        ahead = (error.0 &* 7, error.1 &* 7, error.2 &* 7)
                        let below = next &+ (x &+ 1) &* 3
                        errors[below - step] &+= error.0 &* 3
                        errors[below - step + 1] &+= error.1 &* 3
                        errors[below - step + 2] &+= error.2 &* 3
                        errors[below] &+= error.0 &* 5
                        errors[below + 1] &+= error.1 &* 5
                        errors[below + 2] &+= error.2 &* 5
                        errors[below + step] &+= error.0
                        errors[below + step + 1] &+= error.1
                        errors[below + step + 2] &+= error.2
                    }
                }
            }
        }
        let hasTransparency = opaqueCount < pixels.count
        let palette = GIFPalette(colors: table, indices: indices, transparentIndex: hasTransparency ? transparentIndex : nil)
        return Mapping(palette: palette, meanSquaredError: fitCount == 0 ? 0 : Double(squaredError) / Double(fitCount))
    }

    /// The index of the colour nearest to the centre of the cell of (red,
    /// green, blue), each 0...255.
    @inline(__always)
    private func nearest(_ red: Int32, _ green: Int32, _ blue: Int32) -> Int {
        // Cells are laid out in blocks of 4x4x4, 64 bytes, one cache line:
        // the colours a pixel is dithered to are close to each other, so
        // most of them are looked up in a line read already.
        let (r, g, b) = (Int(red >> 2), Int(green >> 2), Int(blue >> 2))
        let cell = (r >> 2) << 14 | (g >> 2) << 10 | (b >> 2) << 6 | (r & 3) << 4 | (g & 3) << 2 | b & 3
        if cells[cell] == Self.unknown {
            cells[cell] = Self.search(
                red & ~3 | 2, green & ~3 | 2, blue & ~3 | 2, in: UnsafeBufferPointer(entries), bySum: UnsafeBufferPointer(bySum))
        }
        return Int(cells[cell])
    }

    /// The least ``dampingThreshold``: a palette of close colours still
    /// lets an error of a few levels a channel through whole.
    static let minimumDampingThreshold: Int32 = 3 * 6 * 6

    /// The median over colours of the squared distance to the nearest other
    /// colour: the palette's typical gap.
    private static func typicalGap(_ entries: [Int32]) -> Int32 {
        let count = entries.count / 3
        guard count > 1 else { return 0 }
        var gaps = (0..<count).map { index in
            var smallest = Int32.max
            for other in 0..<count where other != index {
                let (red, green, blue) = (
                    entries[other * 3] - entries[index * 3], entries[other * 3 + 1] - entries[index * 3 + 1],
                    entries[other * 3 + 2] - entries[index * 3 + 2]
                )
                smallest = min(smallest, red * red + green * green + blue * blue)
            }
            return smallest
        }
        gaps.sort()
        return gaps[count / 2]
    }

    /// The index of the colour of `entries` (RGB triples) nearest to the
    /// colour given (of equals, the one tried first). Colours are
    /// tried outwards from the colour's sum; one whose sum differs by `d`
    /// is at least `d / √3` away (the sum is the projection on (1, 1, 1)),
    /// so a side is done once `d²` passes three times the best distance.
    private static func search(
        _ red: Int32, _ green: Int32, _ blue: Int32, in entries: UnsafeBufferPointer<Int32>, bySum: UnsafeBufferPointer<(sum: Int32, index: Int32)>
    ) -> UInt8 {
        let sum = red + green + blue
        // The first colour whose sum is not below the colour's.
        var (low, high) = (0, bySum.count)
        while low < high {
            let middle = (low + high) / 2
            if bySum[middle].sum < sum { low = middle + 1 } else { high = middle }
        }
        var best = Int(bySum[min(low, bySum.count - 1)].index)
        var bestDistance = Int32.max
        func consider(_ position: Int) {
            let entry = Int(bySum[position].index) * 3
            let (r, g, b) = (entries[entry] - red, entries[entry + 1] - green, entries[entry + 2] - blue)
            let distance = r * r + g * g + b * b
            if distance < bestDistance {
                best = entry / 3
                bestDistance = distance
            }
        }
        var (up, down) = (low, low - 1)
        var (upDone, downDone) = (up >= bySum.count, down < 0)
        while !(upDone && downDone) {
            if !upDone {
                let gap = bySum[up].sum - sum
                if Int(gap * gap) > 3 * Int(bestDistance) {
                    upDone = true
                } else {
                    consider(up)
                    up += 1
                    upDone = up >= bySum.count
                }
            }
            if !downDone {
                let gap = sum - bySum[down].sum
                if Int(gap * gap) > 3 * Int(bestDistance) {
                    downDone = true
                } else {
                    consider(down)
                    down -= 1
                    downDone = down < 0
                }
            }
        }
        return UInt8(best)
    }
}
