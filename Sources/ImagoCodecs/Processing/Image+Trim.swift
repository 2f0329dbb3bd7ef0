import Foundation

extension Image {
    /// The rectangle left when the borders of one colour are cut off, as
    /// libvips' `vips_find_trim` finds it and imgproxy's `trim` uses it;
    /// crop to it with ``ImageProcessors/Crop``.
    ///
    /// ```swift
    /// if let box = image.trimmedBounds(threshold: 10, background: nil, equalHorizontal: false, equalVertical: false) {
    ///     trimmed = ImageProcessors.Crop(x: box.x, y: box.y, width: box.width, height: box.height).process(image)
    /// }
    /// ```
    ///
    /// The image is first flattened over magenta (255, 0, 255), as imgproxy
    /// does, so that transparent borders form a colour of their own, and
    /// gray is compared as red = green = blue. Then, as libvips does, each
    /// channel goes through a 3x3 median filter (edge pixels repeated
    /// outwards), so that specks of noise in a border do not stop the cut,
    /// and a pixel belongs to the border when each of its channels differs
    /// from `background` by no more than `threshold` (0-255; NaN counts
    /// as 0, a negative one keeps every pixel). `background` nil is the
    /// top-left pixel's colour (after flattening, before the median);
    /// otherwise its alpha is ignored.
    ///
    /// `equalHorizontal` makes the left and right cuts equal, the smaller
    /// of the two; `equalVertical` the top and bottom ones. `nil` when the
    /// whole image is border.
    ///
    /// The search works inwards from each edge, so its cost is that of the
    /// border, not of the image.
    public func trimmedBounds(
        threshold: Double, background: Color?, equalHorizontal: Bool, equalVertical: Bool
    ) -> (x: Int, y: Int, width: Int, height: Int)? {
        // A channel differs when its distance exceeds the threshold; as
        // distances are integers, exceeding its floor is the same.
        let limit = Int16(threshold.isNaN ? 0 : max(-1, min(255, threshold.rounded(.down))))
        let box: (left: Int, top: Int, right: Int, bottom: Int)? = pixels.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            let sampler = TrimSampler(pixels: base, width: width, height: height, bytesPerRow: bytesPerRow, format: pixelFormat)
            let backdrop = background.map { SIMD4<Int16>(Int16($0.red), Int16($0.green), Int16($0.blue), 0) } ?? sampler.flattened(x: 0, y: 0)
            let scan = TrimScan(sampler: sampler, background: backdrop, limit: limit)
            guard let top = (0..<height).first(where: { scan.first(row: $0, from: 0, to: width - 1) != nil }) else { return nil }
            let bottom = (top..<height).last(where: { scan.first(row: $0, from: 0, to: width - 1) != nil }) ?? top
            var left = width
            var right = -1
            for y in top...bottom {
                if left > 0, let x = scan.first(row: y, from: 0, to: left - 1) { left = x }
                if right < width - 1, let x = scan.first(row: y, from: width - 1, to: max(right + 1, left)) { right = x }
            }
            return (left, top, right, bottom)
        }
        guard var (left, top, right, bottom) = box, left <= right else { return nil }
        // The cut on the far side made equal to the near one, or the other way round.
        if equalHorizontal {
            let cut = min(left, width - 1 - right)
            (left, right) = (cut, width - 1 - cut)
        }
        if equalVertical {
            let cut = min(top, height - 1 - bottom)
            (top, bottom) = (cut, height - 1 - cut)
        }
        return (left, top, right - left + 1, bottom - top + 1)
    }
}

/// Reads an image's pixels as libvips' trim sees them: flattened over
/// magenta, gray as three equal channels, in sorted columns for the
/// median filter.
struct TrimSampler {
    let pixels: UnsafePointer<UInt8>
    let width: Int
    let height: Int
    let bytesPerRow: Int
    let format: Image.PixelFormat

    /// The pixel at (x, y) as red, green, blue and 0, flattened over
    /// magenta as ``ImageProcessors/Flatten`` rounds.
    @inline(__always)
    func flattened(x: Int, y: Int) -> SIMD4<Int16> {
        let pixel = pixels + (y * bytesPerRow + x * format.bytesPerPixel)
        let color: SIMD4<Int32>
        let alpha: Int32
        switch format {
        case .gray8: return SIMD4(Int16(pixel[0]), Int16(pixel[0]), Int16(pixel[0]), 0)
        case .rgb8: return SIMD4(Int16(pixel[0]), Int16(pixel[1]), Int16(pixel[2]), 0)
        case .grayAlpha8:
            color = SIMD4(Int32(pixel[0]), Int32(pixel[0]), Int32(pixel[0]), 0)
            alpha = Int32(pixel[1])
        case .rgba8:
            color = SIMD4(Int32(pixel[0]), Int32(pixel[1]), Int32(pixel[2]), 0)
            alpha = Int32(pixel[3])
        }
        let magenta = SIMD4<Int32>(255, 0, 255, 0)
        // (v + 1 + v >> 8) >> 8 is v / 255 for v below 65,535 (see Flatten.over), and needs no division per lane.
        let value = color &* alpha &+ magenta &* (255 &- alpha) &+ 127
        return SIMD4<Int16>(truncatingIfNeeded: (value &+ 1 &+ (value &>> 8)) &>> 8)
    }

    /// Column `x`'s pixels in rows y - 1, y and y + 1 (the edge rows
    /// repeated outwards), sorted lane by lane.
    @inline(__always)
    func column(_ x: Int, around y: Int) -> Triple {
        Triple(flattened(x: x, y: max(0, y - 1)), flattened(x: x, y: y), flattened(x: x, y: min(height - 1, y + 1)))
    }

    /// The median of nine values, lane by lane.
    static func median(
        _ p0: SIMD4<Int16>, _ p1: SIMD4<Int16>, _ p2: SIMD4<Int16>, _ p3: SIMD4<Int16>, _ p4: SIMD4<Int16>,
        _ p5: SIMD4<Int16>, _ p6: SIMD4<Int16>, _ p7: SIMD4<Int16>, _ p8: SIMD4<Int16>
    ) -> SIMD4<Int16> {
        Triple.median(Triple(p0, p1, p2), Triple(p3, p4, p5), Triple(p6, p7, p8))
    }

    /// Three values sorted lane by lane: a column of a 3x3 window.
    struct Triple {
        var low: SIMD4<Int16>
        var middle: SIMD4<Int16>
        var high: SIMD4<Int16>

        @inline(__always)
        init(_ a: SIMD4<Int16>, _ b: SIMD4<Int16>, _ c: SIMD4<Int16>) {
            let (low, high) = (pointwiseMin(a, b), pointwiseMax(a, b))
            self.low = pointwiseMin(low, c)
            self.high = pointwiseMax(high, c)
            self.middle = pointwiseMax(low, pointwiseMin(high, c))
        }

        /// The median of the nine values of three sorted columns: the
        /// median of the largest low, the median middle and the smallest
        /// high (what the classic nine-value sorting network computes once
        /// the columns are sorted), so that a window sliding along a row
        /// sorts each column once.
        @inline(__always)
        static func median(_ a: Triple, _ b: Triple, _ c: Triple) -> SIMD4<Int16> {
            let lows = pointwiseMax(pointwiseMax(a.low, b.low), c.low)
            let highs = pointwiseMin(pointwiseMin(a.high, b.high), c.high)
            return Triple(lows, Triple(a.middle, b.middle, c.middle).middle, highs).middle
        }
    }
}

/// Finds the pixels that differ from the background, after the median,
/// along a row: the 3x3 window slides, so each step sorts one new column.
private struct TrimScan {
    let sampler: TrimSampler
    let background: SIMD4<Int16>
    /// The largest distance a border channel may have.
    let limit: Int16

    /// The first column from `start` to `end` (either way, both included)
    /// whose median in row `y` differs from the background.
    func first(row y: Int, from start: Int, to end: Int) -> Int? {
        let step = end >= start ? 1 : -1
        let last = sampler.width - 1
        // The window's columns behind, at and ahead of x, in scan order.
        var behind = sampler.column(min(last, max(0, start - step)), around: y)
        var current = sampler.column(start, around: y)
        var x = start
        while true {
            let ahead = sampler.column(min(last, max(0, x + step)), around: y)
            let distance = TrimSampler.Triple.median(behind, current, ahead) &- background
            let magnitude = distance.replacing(with: 0 &- distance, where: distance .< 0)
            if any(magnitude .> SIMD4(repeating: limit)) { return x }
            if x == end { return nil }
            (behind, current) = (current, ahead)
            x += step
        }
    }
}
