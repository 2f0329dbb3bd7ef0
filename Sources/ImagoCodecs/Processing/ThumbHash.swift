import Foundation

/// ThumbHash placeholders: a ~25-byte hash of an image from which a blurred preview with its aspect ratio and alpha can be rebuilt.
///
/// ```swift
/// let placeholder = ThumbHash.base64(of: image)  // sent to the client with the image's URL
/// let preview = ThumbHash.image(from: ThumbHash.hash(of: image))  // 32 px on its longest side
/// ```
///
/// The bytes are those of Evan Wallace's format (https://evanw.github.io/thumbhash/), so that any
/// ThumbHash decoder (JavaScript, Swift, Python...) reads them. The image, composited atop its
/// own average colour, is split into luminance L = (r + g + b) / 3, yellow-blue P = (r + g) / 2 - b,
/// red-green Q = r - g and alpha A; each is reduced to the low-frequency terms of its discrete
/// cosine transform, a triangle of them (L: up to 7 along the longer side, 5 if there is alpha;
/// P and Q: 3 by 3; A: 5 by 5). Little-endian, the hash is:
///
/// - bits 0-23: L's constant term (6 bits), P's and Q's (6 each), L's scale (5), whether there is alpha (1);
/// - bits 24-39: the number of L terms along the shorter side (3 bits), P's and Q's scales (6 each),
///   whether the image is wider than tall (1);
/// - with alpha, one byte: A's constant term (4 bits) and A's scale (4);
/// - the other terms, each divided by its channel's scale, as 4-bit nibbles, low nibble first, in the
///   order L, P, Q, A.
///
/// The arithmetic follows the reference encoder's step for step, in doubles, so a hash is the
/// reference's byte for byte (checked against its Python port), including the nibbles of a flat
/// image's terms that only rounding makes nonzero.
public enum ThumbHash {
    /// The largest side the format is meant for: more pixels only cost time, the terms are the same.
    static let maximumSide = 100

    /// The hash of `image`; images larger than 100x100 are first reduced (keeping the aspect ratio) to fit 100x100, as the format expects.
    ///
    /// Gray is treated as colour with equal red, green and blue; colour with alpha is straight (not premultiplied).
    public static func hash(of image: Image) -> [UInt8] {
        guard image.width > maximumSide || image.height > maximumSide else { return encode(image) }
        let box = ImageSize(width: maximumSide, height: maximumSide)
        return encode(ImageResizer.resize(image, to: image.size.fitting(box)) ?? image)
    }

    /// The hash as standard base64 (with padding), the form clients pass to ThumbHash decoders.
    public static func base64(of image: Image) -> String {
        Data(hash(of: image)).base64EncodedString()
    }

    /// The hash of an image of any size (a large one is slow, not wrong).
    static func encode(_ image: Image) -> [UInt8] {
        let width = image.width
        let height = image.height
        let count = width * height
        let (bytes, bytesPerRow) = image.colorPixels()
        let channels = image.pixelFormat.hasAlpha ? 4 : 3

        // The pixels as 0...1 colour and coverage, and the average colour weighted by coverage.
        var red = [Double](repeating: 0, count: count)
        var green = [Double](repeating: 0, count: count)
        var blue = [Double](repeating: 0, count: count)
        var alpha = [Double](repeating: 1, count: count)
        var average = (red: 0.0, green: 0.0, blue: 0.0, alpha: 0.0)
        for y in 0..<height {
            for x in 0..<width {
                let source = y * bytesPerRow + x * channels
                let index = y * width + x
                let coverage = channels == 4 ? Double(bytes[source + 3]) / 255 : 1
                red[index] = Double(bytes[source])
                green[index] = Double(bytes[source + 1])
                blue[index] = Double(bytes[source + 2])
                alpha[index] = coverage
                average.red += coverage / 255 * red[index]
                average.green += coverage / 255 * green[index]
                average.blue += coverage / 255 * blue[index]
                average.alpha += coverage
            }
        }
        if average.alpha > 0 {
            average.red /= average.alpha
            average.green /= average.alpha
            average.blue /= average.alpha
        }

        // Fewer luminance terms when alpha needs room, spread over the sides in proportion to them.
        let hasAlpha = average.alpha < Double(count)
        let limit = hasAlpha ? 5 : 7
        let longest = Double(max(width, height))
        let lx = max(1, nearest(Double(limit * width) / longest))
        let ly = max(1, nearest(Double(limit * height) / longest))

        // Composited atop the average colour, so transparent pixels pull the colour terms nowhere.
        var l = [Double](repeating: 0, count: count)
        var p = [Double](repeating: 0, count: count)
        var q = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let coverage = alpha[index]
            let r = average.red * (1 - coverage) + coverage / 255 * red[index]
            let g = average.green * (1 - coverage) + coverage / 255 * green[index]
            let b = average.blue * (1 - coverage) + coverage / 255 * blue[index]
            l[index] = (r + g + b) / 3
            p[index] = (r + g) / 2 - b
            q[index] = r - g
        }

        let luminance = Channel(l, width: width, height: height, nx: max(3, lx), ny: max(3, ly))
        let yellowBlue = Channel(p, width: width, height: height, nx: 3, ny: 3)
        let redGreen = Channel(q, width: width, height: height, nx: 3, ny: 3)
        let coverage = hasAlpha ? Channel(alpha, width: width, height: height, nx: 5, ny: 5) : nil

        let isLandscape = width > height
        let header24 =
            nearest(63 * luminance.dc, upTo: 63) | nearest(31.5 + 31.5 * yellowBlue.dc, upTo: 63) << 6
            | nearest(31.5 + 31.5 * redGreen.dc, upTo: 63) << 12 | nearest(31 * luminance.scale, upTo: 31) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | nearest(63 * yellowBlue.scale, upTo: 63) << 3 | nearest(63 * redGreen.scale, upTo: 63) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(truncatingIfNeeded: header24), UInt8(truncatingIfNeeded: header24 >> 8), UInt8(truncatingIfNeeded: header24 >> 16),
            UInt8(truncatingIfNeeded: header16), UInt8(truncatingIfNeeded: header16 >> 8),
        ]
        if let coverage {
            hash.append(UInt8(nearest(15 * coverage.dc, upTo: 15) | nearest(15 * coverage.scale, upTo: 15) << 4))
        }
        let terms = [luminance.ac, yellowBlue.ac, redGreen.ac, coverage?.ac ?? []].joined()
        let start = hash.count
        hash.append(contentsOf: repeatElement(0, count: (terms.count + 1) / 2))
        for (index, term) in terms.enumerated() {
            hash[start + index / 2] |= UInt8(nearest(15 * term, upTo: 15) << (index % 2 * 4))
        }
        return hash
    }

    /// The integer nearest to `value`, halves rounded up, as the reference's `Math.round` does for
    /// the non-negative values it rounds; 0 for a value that is not finite.
    static func nearest(_ value: Double) -> Int {
        guard value.isFinite else { return 0 }
        return Int(max(-1e9, min(1e9, value)).rounded())
    }

    /// ``nearest(_:)`` kept within a field of the hash, 0...`limit`.
    static func nearest(_ value: Double, upTo limit: Int) -> Int {
        max(0, min(limit, nearest(value)))
    }

    /// The terms along x and y that a channel keeps: the triangle `cx * ny < nx * (ny - cy)`,
    /// row by row, the constant term (0, 0) first. Encoder and decoder walk it in this order.
    static func terms(nx: Int, ny: Int) -> [(cx: Int, cy: Int)] {
        var terms: [(cx: Int, cy: Int)] = []
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                terms.append((cx, cy))
                cx += 1
            }
        }
        return terms
    }

    /// One channel's low-frequency cosine terms: the constant term, and the others scaled to 0...1
    /// by the largest magnitude among them (`scale`).
    struct Channel {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0

        /// The terms of `values` (`width` x `height`, row by row) in the triangle of ``ThumbHash/terms(nx:ny:)``.
        ///
        /// Each term is the sum over the pixels, row by row, of value x cos(x) x cos(y), as the
        /// reference sums it (so the same doubles come out), but all terms are summed in one pass.
        init(_ values: [Double], width: Int, height: Int, nx: Int, ny: Int) {
            let terms = ThumbHash.terms(nx: nx, ny: ny)
            let termCount = terms.count
            // Each term's cosine at each column and row, laid out term by term for the loop below
            // (computed once per frequency: the cosines are most of the work otherwise).
            let xCosines = (0..<nx).map { cx in (0..<width).map { x in cos(Double.pi / Double(width) * Double(cx) * (Double(x) + 0.5)) } }
            let yCosines = (0..<ny).map { cy in (0..<height).map { y in cos(Double.pi / Double(height) * Double(cy) * (Double(y) + 0.5)) } }
            var xFactors = [Double](repeating: 0, count: width * termCount)
            for x in 0..<width {
                for (k, term) in terms.enumerated() { xFactors[x * termCount + k] = xCosines[term.cx][x] }
            }
            var yFactors = [Double](repeating: 0, count: height * termCount)
            for y in 0..<height {
                for (k, term) in terms.enumerated() { yFactors[y * termCount + k] = yCosines[term.cy][y] }
            }
            var sums = [Double](repeating: 0, count: termCount)
            values.withUnsafeBufferPointer { values in
                xFactors.withUnsafeBufferPointer { xFactors in
                    yFactors.withUnsafeBufferPointer { yFactors in
                        sums.withUnsafeMutableBufferPointer { sums in
                            for y in 0..<height {
                                let fy = yFactors.baseAddress! + y * termCount
                                for x in 0..<width {
                                    let value = values[y * width + x]
                                    let fx = xFactors.baseAddress! + x * termCount
                                    for k in 0..<termCount { sums[k] += value * fx[k] * fy[k] }
                                }
                            }
                        }
                    }
                }
            }
            let pixelCount = Double(width * height)
            for (k, sum) in sums.enumerated() {
                let term = sum / pixelCount
                if k == 0 {
                    dc = term
                } else {
                    ac.append(term)
                    scale = max(scale, abs(term))
                }
            }
            if scale > 0 {
                ac = ac.map { 0.5 + 0.5 / scale * $0 }
            }
        }
    }
}
