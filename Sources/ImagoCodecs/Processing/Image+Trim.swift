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
        let limit = Int32(threshold.isNaN ? 0 : max(-1, min(255, threshold.rounded(.down))))
        let box: (left: Int, top: Int, right: Int, bottom: Int)? = pixels.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            let sampler = TrimSampler(pixels: base, width: width, height: height, bytesPerRow: bytesPerRow, format: pixelFormat)
            let backdrop = background.map { SIMD4<Int32>(Int32($0.red), Int32($0.green), Int32($0.blue), 0) } ?? sampler.flattened(x: 0, y: 0)
            // A channel differs when its distance exceeds the threshold; as
            // distances are integers, exceeding its floor is the same.
            func differs(_ x: Int, _ y: Int) -> Bool {
                let distance = sampler.median(x: x, y: y) &- backdrop
                let magnitude = distance.replacing(with: 0 &- distance, where: distance .< 0)
                return any(magnitude .> SIMD4(repeating: limit))
            }
            func rowDiffers(_ y: Int) -> Bool { (0..<width).contains { differs($0, y) } }
            guard let top = (0..<height).first(where: rowDiffers) else { return nil }
            let bottom = (top..<height).last(where: rowDiffers) ?? top
            var left = width
            var right = -1
            for y in top...bottom {
                if let x = (0..<left).first(where: { differs($0, y) }) { left = x }
                if let x = (max(right + 1, left)..<width).last(where: { differs($0, y) }) { right = x }
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
/// magenta, gray as three equal channels, and median-filtered.
struct TrimSampler {
    let pixels: UnsafePointer<UInt8>
    let width: Int
    let height: Int
    let bytesPerRow: Int
    let format: Image.PixelFormat

    /// The pixel at (x, y) as red, green, blue and 0, flattened over
    /// magenta as ``ImageProcessors/Flatten`` rounds.
    @inline(__always)
    func flattened(x: Int, y: Int) -> SIMD4<Int32> {
        let pixel = pixels + (y * bytesPerRow + x * format.bytesPerPixel)
        let color: SIMD4<Int32>
        let alpha: Int32
        switch format {
        case .gray8: return SIMD4(Int32(pixel[0]), Int32(pixel[0]), Int32(pixel[0]), 0)
        case .rgb8: return SIMD4(Int32(pixel[0]), Int32(pixel[1]), Int32(pixel[2]), 0)
        case .grayAlpha8:
            color = SIMD4(Int32(pixel[0]), Int32(pixel[0]), Int32(pixel[0]), 0)
            alpha = Int32(pixel[1])
        case .rgba8:
            color = SIMD4(Int32(pixel[0]), Int32(pixel[1]), Int32(pixel[2]), 0)
            alpha = Int32(pixel[3])
        }
        let magenta = SIMD4<Int32>(255, 0, 255, 0)
        return (color &* alpha &+ magenta &* (255 &- alpha) &+ 127) / 255
    }

    /// The median of each channel over the 3x3 pixels around (x, y), the
    /// edge pixels repeated outwards.
    func median(x: Int, y: Int) -> SIMD4<Int32> {
        let (left, right) = (max(0, x - 1), min(width - 1, x + 1))
        let (above, below) = (max(0, y - 1), min(height - 1, y + 1))
        return Self.median(
            flattened(x: left, y: above), flattened(x: x, y: above), flattened(x: right, y: above),
            flattened(x: left, y: y), flattened(x: x, y: y), flattened(x: right, y: y),
            flattened(x: left, y: below), flattened(x: x, y: below), flattened(x: right, y: below)
        )
    }

    /// The median of nine values, lane by lane: a sorting network of 19
    /// compare-exchanges that leaves the median in the middle.
    static func median(
        _ p0: SIMD4<Int32>, _ p1: SIMD4<Int32>, _ p2: SIMD4<Int32>, _ p3: SIMD4<Int32>, _ p4: SIMD4<Int32>,
        _ p5: SIMD4<Int32>, _ p6: SIMD4<Int32>, _ p7: SIMD4<Int32>, _ p8: SIMD4<Int32>
    ) -> SIMD4<Int32> {
        var p = (p0, p1, p2, p3, p4, p5, p6, p7, p8)
        @inline(__always)
        func sort(_ a: inout SIMD4<Int32>, _ b: inout SIMD4<Int32>) {
            let low = pointwiseMin(a, b)
            b = pointwiseMax(a, b)
            a = low
        }
        sort(&p.1, &p.2)
        sort(&p.4, &p.5)
        sort(&p.7, &p.8)
        sort(&p.0, &p.1)
        sort(&p.3, &p.4)
        sort(&p.6, &p.7)
        sort(&p.1, &p.2)
        sort(&p.4, &p.5)
        sort(&p.7, &p.8)
        sort(&p.0, &p.3)
        sort(&p.5, &p.8)
        sort(&p.4, &p.7)
        sort(&p.3, &p.6)
        sort(&p.1, &p.4)
        sort(&p.2, &p.5)
        sort(&p.4, &p.7)
        sort(&p.4, &p.2)
        sort(&p.6, &p.4)
        sort(&p.4, &p.2)
        return p.4
    }
}
