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
        let width = columns.count, height = rows.count
        guard width > 0, height > 0 else { return nil }
        let channels = image.pixelFormat.bytesPerPixel
        let alpha = image.pixelFormat.hasAlpha ? channels - 1 : -1
        let columnTable = FootprintTable(columns)
        let sourceRowFloats = image.width * channels
        let rowFloats = width * channels

        // Horizontal pass: every source row to the target width, colour
        // premultiplied by alpha (so transparent pixels weigh nothing).
        var horizontal = [Float](repeating: 0, count: image.height * rowFloats)
        var sourceRow = [Float](repeating: 0, count: sourceRowFloats)
        image.pixels.withUnsafeBufferPointer { source in
            horizontal.withUnsafeMutableBufferPointer { output in
                sourceRow.withUnsafeMutableBufferPointer { row in
                    columnTable.weights.withUnsafeBufferPointer { weights in
                        for y in 0..<image.height {
                            let base = y * image.bytesPerRow
                            for index in 0..<sourceRowFloats { row[index] = Float(source[base + index]) }
                            if alpha >= 0 {
                                for pixel in stride(from: 0, to: sourceRowFloats, by: channels) {
                                    let coverage = row[pixel + alpha] / 255
                                    for channel in 0..<alpha { row[pixel + channel] *= coverage }
                                }
                            }
                            let outputRow = y * rowFloats
                            for x in 0..<width {
                                let first = columnTable.first[x] * channels, offset = columnTable.offset[x], count = columnTable.count[x]
                                for channel in 0..<channels {
                                    var sum: Float = 0
                                    var index = first + channel
                                    for k in 0..<count {
                                        sum += row[index] * weights[offset + k]
                                        index += channels
                                    }
                                    output[outputRow + x * channels + channel] = sum
                                }
                            }
                        }
                    }
                }
            }
        }

        // Vertical pass, then un-premultiply and round.
        var pixels = [UInt8](repeating: 0, count: height * rowFloats)
        var accumulator = [Float](repeating: 0, count: rowFloats)
        horizontal.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { output in
                accumulator.withUnsafeMutableBufferPointer { sums in
                    for (y, footprint) in rows.enumerated() {
                        for index in 0..<rowFloats { sums[index] = 0 }
                        for (k, weight) in footprint.weights.enumerated() {
                            let row = (footprint.first + k) * rowFloats
                            for index in 0..<rowFloats { sums[index] += input[row + index] * weight }
                        }
                        if alpha >= 0 {
                            for pixel in stride(from: 0, to: rowFloats, by: channels) {
                                let coverage = sums[pixel + alpha] / 255
                                for channel in 0..<alpha { sums[pixel + channel] = coverage > 0 ? sums[pixel + channel] / coverage : 0 }
                            }
                        }
                        let outputRow = y * rowFloats
                        for index in 0..<rowFloats { output[outputRow + index] = UInt8(max(0, min(255, sums[index].rounded()))) }
                    }
                }
            }
        }
        return Image(width: width, height: height, pixelFormat: image.pixelFormat, pixels: pixels)
    }
}

/// Footprints flattened for the inner loop: the weights of all of them in
/// one array, with each one's first source pixel, offset and count.
struct FootprintTable {
    var first: [Int] = []
    var offset: [Int] = []
    var count: [Int] = []
    var weights: [Float] = []

    init(_ footprints: [Footprint]) {
        for footprint in footprints {
            first.append(footprint.first)
            offset.append(weights.count)
            count.append(footprint.weights.count)
            weights.append(contentsOf: footprint.weights)
        }
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
        ImageDecodingOptions(targetSize: box, contentMode: .fit).outputSize(for: self)
    }
}
