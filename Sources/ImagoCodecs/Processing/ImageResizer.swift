/// Resamples images to an exact size.
///
/// Downscaling averages every source pixel under each target pixel's
/// footprint, with fractional weights at the edges (a box filter over the
/// exact area), so that fine patterns turn into their average instead of
/// aliasing. Upscaling uses the same weights, which blends only at source
/// pixel boundaries. Colour is averaged premultiplied by alpha, so that
/// transparent pixels do not bleed their (invisible) colour into the edges.
public enum ImageResizer {
    /// `image` resampled to `size`, or `nil` if `size` is empty.
    public static func resize(_ image: Image, to size: ImageSize) -> Image? {
        guard size.width > 0, size.height > 0 else { return nil }
        if size.width == image.width && size.height == image.height { return image }
        return resample(
            image,
            columns: Footprint.weights(from: image.width, to: size.width),
            rows: Footprint.weights(from: image.height, to: size.height)
        )
    }

    /// Each output pixel is the weighted sum of the source pixels in its
    /// column and row footprints (a separable filter: resampling, or a
    /// convolution when there are as many footprints as pixels).
    static func resample(_ image: Image, columns: [Footprint], rows: [Footprint]) -> Image? {
        let size = ImageSize(width: columns.count, height: rows.count)
        guard size.width > 0, size.height > 0 else { return nil }
        let channels = image.pixelFormat.bytesPerPixel
        let alpha = image.pixelFormat.hasAlpha ? channels - 1 : nil
        let rowFloats = size.width * channels

        // Horizontal pass: every source row to the target width, premultiplied.
        var horizontal = [Float](repeating: 0, count: image.height * rowFloats)
        image.pixels.withUnsafeBufferPointer { source in
            horizontal.withUnsafeMutableBufferPointer { output in
                for y in 0..<image.height {
                    let sourceRow = y * image.bytesPerRow
                    let outputRow = y * rowFloats
                    for (x, footprint) in columns.enumerated() {
                        var sums = (Float(0), Float(0), Float(0), Float(0))
                        for (offset, weight) in footprint.weights.enumerated() {
                            let pixel = sourceRow + (footprint.first + offset) * channels
                            let a = alpha.map { Float(source[pixel + $0]) / 255 } ?? 1
                            let w = weight * a
                            sums.0 += Float(source[pixel]) * w
                            if channels > 1 { sums.1 += Float(source[pixel + 1]) * (alpha == 1 ? weight : w) }
                            if channels > 2 { sums.2 += Float(source[pixel + 2]) * w }
                            if channels > 3 { sums.3 += Float(source[pixel + 3]) * weight }
                        }
                        let target = outputRow + x * channels
                        output[target] = sums.0
                        if channels > 1 { output[target + 1] = sums.1 }
                        if channels > 2 { output[target + 2] = sums.2 }
                        if channels > 3 { output[target + 3] = sums.3 }
                    }
                }
            }
        }

        // Vertical pass, then un-premultiply and round.
        var pixels = [UInt8](repeating: 0, count: size.height * rowFloats)
        horizontal.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { output in
                var accumulator = [Float](repeating: 0, count: rowFloats)
                for (y, footprint) in rows.enumerated() {
                    for index in accumulator.indices { accumulator[index] = 0 }
                    for (offset, weight) in footprint.weights.enumerated() {
                        let row = (footprint.first + offset) * rowFloats
                        for index in 0..<rowFloats { accumulator[index] += input[row + index] * weight }
                    }
                    for x in 0..<size.width {
                        let base = x * channels
                        let coverage = alpha.map { accumulator[base + $0] / 255 } ?? 1
                        for channel in 0..<channels {
                            var value = accumulator[base + channel]
                            if let alpha, channel != alpha { value = coverage > 0 ? value / coverage : 0 }
                            output[y * rowFloats + base + channel] = UInt8(max(0, min(255, value.rounded())))
                        }
                    }
                }
            }
        }
        return Image(width: size.width, height: size.height, pixelFormat: image.pixelFormat, pixels: pixels)
    }
}

/// The source pixels one target pixel covers, and how much of each.
struct Footprint {
    var first: Int
    var weights: [Float]

    /// For each of `count` pixels, `kernel` (odd length, centred on the
    /// pixel) clipped to the image and renormalised to sum to 1.
    static func convolution(count: Int, kernel: [Float]) -> [Footprint] {
        let reach = kernel.count / 2
        return (0..<count).map { index in
            let first = max(0, index - reach), last = min(count - 1, index + reach)
            let weights = Array(kernel[(first - index + reach)...(last - index + reach)])
            let total = weights.reduce(0, +)
            return Footprint(first: first, weights: weights.map { $0 / total })
        }
    }

    /// For each of `target` pixels, the weights of the `source` pixels under
    /// it; each footprint's weights sum to 1.
    static func weights(from source: Int, to target: Int) -> [Footprint] {
        let scale = Double(source) / Double(target)
        return (0..<target).map { index in
            let start = Double(index) * scale
            let end = start + scale
            let first = min(source - 1, Int(start))
            let last = max(first, min(source - 1, Int((end - 1e-9).rounded(.down))))
            var weights: [Float] = []
            weights.reserveCapacity(last - first + 1)
            for pixel in first...last {
                let covered = min(end, Double(pixel + 1)) - max(start, Double(pixel))
                weights.append(Float(max(0, covered) / scale))
            }
            return Footprint(first: first, weights: weights)
        }
    }
}

extension ImageSize {
    /// This size scaled to fit inside `box`, keeping the aspect ratio and
    /// never enlarging; each side is at least 1.
    public func fitting(_ box: ImageSize) -> ImageSize {
        guard width > 0, height > 0 else { return self }
        let scale = min(1, min(Double(box.width) / Double(width), Double(box.height) / Double(height)))
        return ImageSize(width: max(1, Int((Double(width) * scale).rounded())), height: max(1, Int((Double(height) * scale).rounded())))
    }
}
