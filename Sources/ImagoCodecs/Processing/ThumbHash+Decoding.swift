import Foundation

extension ThumbHash {
    /// The preview image a hash stands for (rgba8, longest side 32 px), or nil for bytes that are not a ThumbHash.
    ///
    /// As the reference decoder does, the colour terms are boosted by 1.25 to make up for the
    /// saturation that quantising them loses.
    public static func image(from hash: [UInt8]) -> Image? {
        guard let header = Header(hash) else { return nil }
        var reader = NibbleReader(hash: hash, start: header.acStart)
        let luminance = reader.terms(nx: header.lx, ny: header.ly, scale: header.lScale)
        let yellowBlue = reader.terms(nx: 3, ny: 3, scale: header.pScale * 1.25)
        let redGreen = reader.terms(nx: 3, ny: 3, scale: header.qScale * 1.25)
        let coverage = header.hasAlpha ? reader.terms(nx: 5, ny: 5, scale: header.aScale) : []

        let ratio = header.aspectRatio
        let width = nearest(ratio > 1 ? 32 : 32 * ratio)
        let height = nearest(ratio > 1 ? 32 / ratio : 32)
        let xTerms = max(header.lx, header.hasAlpha ? 5 : 3)
        let yTerms = max(header.ly, header.hasAlpha ? 5 : 3)
        var fx = [Double](repeating: 0, count: xTerms)
        var fy = [Double](repeating: 0, count: yTerms)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for cy in 0..<yTerms { fy[cy] = cos(Double.pi / Double(height) * (Double(y) + 0.5) * Double(cy)) }
            for x in 0..<width {
                for cx in 0..<xTerms { fx[cx] = cos(Double.pi / Double(width) * (Double(x) + 0.5) * Double(cx)) }
                let l = header.lDC + sum(luminance, nx: header.lx, ny: header.ly, fx: fx, fy: fy)
                let p = header.pDC + sum(yellowBlue, nx: 3, ny: 3, fx: fx, fy: fy)
                let q = header.qDC + sum(redGreen, nx: 3, ny: 3, fx: fx, fy: fy)
                let a = header.hasAlpha ? header.aDC + sum(coverage, nx: 5, ny: 5, fx: fx, fy: fy) : 1
                let (r, g, b) = rgb(l: l, p: p, q: q)
                let index = (y * width + x) * 4
                pixels[index] = byte(r)
                pixels[index + 1] = byte(g)
                pixels[index + 2] = byte(b)
                pixels[index + 3] = byte(a)
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    /// The average colour and alpha the hash encodes, 0...1 each; nil for bytes that are not a ThumbHash.
    public static func averageColor(of hash: [UInt8]) -> (red: Double, green: Double, blue: Double, alpha: Double)? {
        guard let header = Header(hash) else { return nil }
        let (r, g, b) = rgb(l: header.lDC, p: header.pDC, q: header.qDC)
        return (max(0, min(1, r)), max(0, min(1, g)), max(0, min(1, b)), header.hasAlpha ? header.aDC : 1)
    }

    /// The approximate aspect ratio (width / height) the hash encodes; nil for bad bytes.
    ///
    /// It is the ratio of the luminance terms along each side, so 1/7...7 in steps of sevenths
    /// (fifths for an image with alpha): 4:3 reads as 7/5.
    public static func approximateAspectRatio(of hash: [UInt8]) -> Double? {
        Header(hash)?.aspectRatio
    }

    /// Red, green and blue from luminance, yellow-blue and red-green (the inverse of the encoder's mix).
    private static func rgb(l: Double, p: Double, q: Double) -> (Double, Double, Double) {
        let b = l - 2 / 3 * p
        let r = (3 * l - b + q) / 2
        return (r, r - q, b)
    }

    /// A 0...1 value as a byte, clamped.
    private static func byte(_ value: Double) -> UInt8 {
        UInt8(nearest(255 * min(1, value), upTo: 255))
    }

    /// A channel's varying part at one pixel: its terms, in the triangle's order without the
    /// constant, times the pixel's cosines (the y factor doubled, as the reference has it).
    private static func sum(_ terms: [Double], nx: Int, ny: Int, fx: [Double], fy: [Double]) -> Double {
        var total = 0.0
        var index = 0
        for cy in 0..<ny {
            let fy2 = fy[cy] * 2
            var cx = cy > 0 ? 0 : 1
            while cx * ny < nx * (ny - cy) {
                total += terms[index] * fx[cx] * fy2
                index += 1
                cx += 1
            }
        }
        return total
    }

    /// The fixed fields of a hash, checked: enough bytes for the terms the header announces, and
    /// a term count along the shorter side that an encoder can write (1 up to the limit).
    struct Header {
        var lDC: Double
        var pDC: Double
        var qDC: Double
        var lScale: Double
        var hasAlpha: Bool
        var pScale: Double
        var qScale: Double
        var isLandscape: Bool
        /// The luminance terms along each side as stored: the longer side has the limit (7, or 5 with alpha).
        var storedX: Int
        var storedY: Int
        var aDC: Double
        var aScale: Double
        /// The first byte of the nibbles.
        var acStart: Int

        /// The luminance terms kept along x and y: at least 3 each, as the encoder keeps.
        var lx: Int { max(3, storedX) }
        var ly: Int { max(3, storedY) }
        var aspectRatio: Double { Double(storedX) / Double(storedY) }

        init?(_ hash: [UInt8]) {
            guard hash.count >= 5 else { return nil }
            let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
            let header16 = Int(hash[3]) | Int(hash[4]) << 8
            lDC = Double(header24 & 63) / 63
            pDC = Double((header24 >> 6) & 63) / 31.5 - 1
            qDC = Double((header24 >> 12) & 63) / 31.5 - 1
            lScale = Double((header24 >> 18) & 31) / 31
            hasAlpha = header24 >> 23 != 0
            pScale = Double((header16 >> 3) & 63) / 63
            qScale = Double((header16 >> 9) & 63) / 63
            isLandscape = header16 >> 15 != 0
            let limit = hasAlpha ? 5 : 7
            let shorter = header16 & 7
            guard shorter >= 1, shorter <= limit else { return nil }
            storedX = isLandscape ? limit : shorter
            storedY = isLandscape ? shorter : limit
            acStart = hasAlpha ? 6 : 5
            guard hash.count >= acStart else { return nil }
            aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
            aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0
            let lx = max(3, storedX)
            let ly = max(3, storedY)
            let termCount = ThumbHash.terms(nx: lx, ny: ly).count - 1 + 5 + 5 + (hasAlpha ? 14 : 0)
            guard hash.count == acStart + (termCount + 1) / 2 else { return nil }
        }
    }

    /// Reads the 4-bit terms in order, low nibble first, each mapped from 0...15 to -1...1 times a scale.
    private struct NibbleReader {
        let hash: [UInt8]
        var index: Int

        init(hash: [UInt8], start: Int) {
            self.hash = hash
            self.index = start * 2
        }

        mutating func terms(nx: Int, ny: Int, scale: Double) -> [Double] {
            (1..<ThumbHash.terms(nx: nx, ny: ny).count).map { _ in
                let byte = index / 2 < hash.count ? hash[index / 2] : 0
                let nibble = index % 2 == 0 ? byte & 15 : byte >> 4
                index += 1
                return (Double(nibble) / 7.5 - 1) * scale
            }
        }
    }
}
