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

    /// An image of `size` resampled from a source of `width`x`height` pixels
    /// in `pixelFormat` whose rows `row` hands over one at a time, top to
    /// bottom, each once (a decoder streaming rows: the source is never
    /// whole in memory). `row(y)` returns row y's bytes, valid until the
    /// next call. `nil` if a size is empty.
    public static func resize<Failure: Error>(
        width: Int, height: Int, pixelFormat: Image.PixelFormat, to size: ImageSize,
        row: (Int) throws(Failure) -> UnsafeBufferPointer<UInt8>
    ) throws(Failure) -> Image? {
        guard width > 0, height > 0, size.width > 0, size.height > 0 else { return nil }
        return try resample(
            sourceWidth: width, pixelFormat: pixelFormat,
            columns: Footprint.weights(from: width, to: size.width),
            rows: Footprint.weights(from: height, to: size.height),
            row: row
        )
    }

    /// `resample(sourceWidth:...)` over a whole image's rows.
    static func resample(_ image: Image, columns: [Footprint], rows: [Footprint]) -> Image? {
        image.pixels.withUnsafeBufferPointer { source in
            let rowBytes = image.width * image.pixelFormat.bytesPerPixel
            return resample(sourceWidth: image.width, pixelFormat: image.pixelFormat, columns: columns, rows: rows) { y in
                UnsafeBufferPointer(rebasing: source[(y * image.bytesPerRow)..<(y * image.bytesPerRow + rowBytes)])
            }
        }
    }

    /// Each output pixel is the weighted sum of the source pixels in its
    /// column and row footprints (a separable filter: resampling, or a
    /// convolution when there are as many footprints as pixels). Footprints
    /// must start in non-decreasing order, as both kinds do.
    ///
    /// Source rows are asked of `row` in order, when the first output row
    /// needing them comes up, and resampled horizontally into a ring of as
    /// many rows as the tallest footprint, so the scratch memory is a few
    /// rows, not a float copy of the image.
    static func resample<Failure: Error>(
        sourceWidth: Int, pixelFormat: Image.PixelFormat, columns: [Footprint], rows: [Footprint],
        row: (Int) throws(Failure) -> UnsafeBufferPointer<UInt8>
    ) throws(Failure) -> Image? {
        let width = columns.count
        let height = rows.count
        guard width > 0, height > 0 else { return nil }
        let channels = pixelFormat.bytesPerPixel
        let alpha = pixelFormat.hasAlpha ? channels - 1 : -1
        let columnTable = FootprintTable(columns)
        let rowFloats = width * channels
        let ringRows = rows.map(\.weights.count).max() ?? 1
        let ring = UnsafeMutableBufferPointer<Float>.allocate(capacity: ringRows * rowFloats)
        let sourceRow = UnsafeMutableBufferPointer<Float>.allocate(capacity: sourceWidth * channels)
        let sums = UnsafeMutableBufferPointer<Float>.allocate(capacity: rowFloats)
        defer {
            ring.deallocate()
            sourceRow.deallocate()
            sums.deallocate()
        }
        var pixels = [UInt8](repeating: 0, count: height * rowFloats)
        var resampledUpTo = -1
        for (y, footprint) in rows.enumerated() {
            while resampledUpTo < footprint.first + footprint.weights.count - 1 {
                resampledUpTo += 1
                let target = UnsafeMutableBufferPointer(rebasing: ring[((resampledUpTo % ringRows) * rowFloats)...].prefix(rowFloats))
                premultipliedRow(try row(resampledUpTo), into: sourceRow, channels: channels, alpha: alpha)
                columnTable.apply(to: UnsafeBufferPointer(sourceRow), into: target, channels: channels)
            }
            for (k, weight) in footprint.weights.enumerated() {
                let source = ring.baseAddress! + ((footprint.first + k) % ringRows) * rowFloats
                if k == 0 {
                    for index in 0..<rowFloats { sums[index] = source[index] * weight }
                } else {
                    for index in 0..<rowFloats { sums[index] += source[index] * weight }
                }
            }
            pixels.withUnsafeMutableBufferPointer { output in
                storeRow(
                    sums, into: UnsafeMutableBufferPointer(rebasing: output[(y * rowFloats)..<((y + 1) * rowFloats)]), channels: channels,
                    alpha: alpha)
            }
        }
        return Image(width: width, height: height, pixelFormat: pixelFormat, pixels: pixels)
    }

    /// A row of bytes as floats, colour premultiplied by alpha so that
    /// transparent pixels weigh nothing.
    private static func premultipliedRow(_ bytes: UnsafeBufferPointer<UInt8>, into row: UnsafeMutableBufferPointer<Float>, channels: Int, alpha: Int)
    {
        for index in 0..<row.count { row[index] = Float(bytes[index]) }
        guard alpha >= 0 else { return }
        for pixel in stride(from: 0, to: row.count, by: channels) {
            // An opaque pixel's coverage is exactly 1: multiplying would
            // change nothing, and most pixels are opaque.
            guard bytes[pixel + alpha] != 255 else { continue }
            let coverage = row[pixel + alpha] / 255
            for channel in 0..<alpha { row[pixel + channel] *= coverage }
        }
    }

    /// Un-premultiplies and rounds a row of sums into bytes.
    private static func storeRow(_ sums: UnsafeMutableBufferPointer<Float>, into output: UnsafeMutableBufferPointer<UInt8>, channels: Int, alpha: Int)
    {
        if alpha >= 0 {
            for pixel in stride(from: 0, to: sums.count, by: channels) {
                let coverage = sums[pixel + alpha] / 255
                // Dividing by a coverage of exactly 1 (opaque pixels, mostly)
                // would change nothing.
                guard coverage != 1 else { continue }
                for channel in 0..<alpha { sums[pixel + channel] = coverage > 0 ? sums[pixel + channel] / coverage : 0 }
            }
        }
        for index in 0..<sums.count { output[index] = roundedByte(sums[index]) }
    }

    /// `value` clamped to 0...255 and rounded to the nearest byte, halves
    /// up, as `rounded()` does but without its call to libm's roundf or
    /// `UInt8(_:)`'s range checks, so that loops over pixels vectorise:
    /// the same byte for every Float (checked for all of them in [0, 256);
    /// the clamp covers the rest).
    @inline(__always)
    static func roundedByte(_ value: Float) -> UInt8 {
        truncated(min(255, max(0, value)) + 0.49999997)
    }

    /// `UInt8(value)` for a value in [0, 256), with no range check (which
    /// kept the loop above from vectorising): the nearest integer by adding
    /// 2^23, after which a Float has no fraction bits; one less if that
    /// rounded up; the integer read from the low bits of the mantissa.
    @inline(__always)
    private static func truncated(_ value: Float) -> UInt8 {
        let magic: Float = 8_388_608
        let nearest = (value + magic) - magic
        let integer = nearest > value ? nearest - 1 : nearest
        return UInt8(truncatingIfNeeded: (integer + magic).bitPattern)
    }
}

/// Footprints flattened for the inner loop: every one `span` weights long
/// (the longest footprint's count), shorter ones padded with zero weights
/// in front, so the loop over a footprint has one length. A zero weight
/// adds exactly nothing, so the sums are the unpadded ones.
struct FootprintTable {
    var first: [Int] = []
    var weights: [Float] = []
    let span: Int

    init(_ footprints: [Footprint]) {
        span = footprints.map(\.weights.count).max() ?? 1
        for footprint in footprints {
            let padding = span - footprint.weights.count
            // Padded in front: the earlier pixels exist when the footprint
            // is the last one (first >= padding whenever sources >= span).
            let start = max(0, footprint.first - padding)
            first.append(start)
            weights.append(contentsOf: repeatElement(0, count: footprint.first - start))
            weights.append(contentsOf: footprint.weights)
            weights.append(contentsOf: repeatElement(0, count: span - (footprint.first - start) - footprint.weights.count))
        }
    }

    /// Resamples one row of `channels`-float pixels to one pixel per footprint.
    func apply(to row: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, channels: Int) {
        // The common pixel sizes and spans get loops of their own, with no
        // test of the channel count per source pixel.
        switch (channels, span) {
        case (3, 2): applyInline(to: row, into: output, channels: 3, span: 2)
        case (3, 3): applyInline(to: row, into: output, channels: 3, span: 3)
        case (3, _): applyInline(to: row, into: output, channels: 3, span: span)
        case (4, 2): applyInline(to: row, into: output, channels: 4, span: 2)
        case (4, 3): applyInline(to: row, into: output, channels: 4, span: 3)
        case (4, _): applyInline(to: row, into: output, channels: 4, span: span)
        // Sharpen's planes: lightness, or lightness and alpha.
        case (1, _): applyInline(to: row, into: output, channels: 1, span: span)
        case (2, _): applyInline(to: row, into: output, channels: 2, span: span)
        default: applyInline(to: row, into: output, channels: channels, span: span)
        }
    }

    @inline(__always)
    private func applyInline(to row: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, channels: Int, span: Int) {
        first.withUnsafeBufferPointer { first in
            weights.withUnsafeBufferPointer { weights in
                for x in 0..<first.count {
                    var index = first[x] * channels
                    var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
                    for k in (x * span)..<(x * span + span) {
                        let weight = weights[k]
                        sums.0 += row[index] * weight
                        if channels > 1 { sums.1 += row[index + 1] * weight }
                        if channels > 2 { sums.2 += row[index + 2] * weight }
                        if channels > 3 { sums.3 += row[index + 3] * weight }
                        index += channels
                    }
                    let target = x * channels
                    output[target] = sums.0
                    if channels > 1 { output[target + 1] = sums.1 }
                    if channels > 2 { output[target + 2] = sums.2 }
                    if channels > 3 { output[target + 3] = sums.3 }
                }
            }
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
            let first = max(0, index - reach)
            let last = min(count - 1, index + reach)
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
