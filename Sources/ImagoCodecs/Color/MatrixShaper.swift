import CLcms2
import Foundation

/// The conversion of 8-bit pixels from a matrix-shaper profile (the kind
/// cameras, phones and editors embed: Display P3, Adobe RGB, ProPhoto) to
/// sRGB, done here rather than by lcms: each input curve and the 3x3 matrix
/// in linear light folded into one lookup table, and a lookup table for
/// sRGB's curve. It is the relative colorimetric conversion lcms makes for
/// these profiles (for which perceptual is the same), out-of-gamut channels
/// clipped; lcms's own 8-bit path took more of a thumbnail's CPU time
/// (Benchmarks/ColorCost). Gray profiles are one lookup table.
struct MatrixShaper: Sendable {
    /// What each stored value adds to each output channel's linear light:
    /// for input channel c and output channel o, 256 entries at
    /// (c * 3 + o) * 256, in fixed point (``linearMaximum`` is full light,
    /// with ``fractionBits`` more bits). Curve and matrix in one lookup.
    /// For gray, one curve: linear light for each stored value.
    private let contributions: [Int32]
    /// sRGB's 8-bit value for each linear value 0...``linearMaximum``.
    private let outputCurve: [UInt8]
    private let isGray: Bool

    /// Linear light in steps of 1/16383: under a fifth of an 8-bit step
    /// where sRGB's curve is steepest.
    private static let linearMaximum = 16_383
    private static let fractionBits: Int32 = 4

    /// The conversion from `profile` to sRGB, or nil when it is not a
    /// matrix-shaper RGB or gray profile with readable tags.
    init?(_ profile: cmsHPROFILE) {
        let space = cmsGetColorSpace(profile)
        guard space == cmsSigRgbData || space == cmsSigGrayData, cmsIsMatrixShaper(profile) != 0 else { return nil }
        isGray = space == cmsSigGrayData
        let curveTags = isGray ? [cmsSigGrayTRCTag] : [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag]
        var curves: [[Double]] = []
        for tag in curveTags {
            guard let curve = cmsReadTag(profile, tag).map(OpaquePointer.init) else { return nil }
            // Clamped, and finite: a damaged curve must not reach the loop's indexing.
            curves.append(
                (0...255).map { value in
                    let linear = Double(cmsEvalToneCurveFloat(curve, Float(value) / 255))
                    return linear.isFinite ? min(max(linear, 0), 1) : 0
                })
        }
        let scale = Double(Self.linearMaximum)
        if isGray {
            contributions = curves[0].map { Int32(($0 * scale).rounded()) }
        } else {
            guard let source = Self.colorants(of: profile), let reference = cmsCreate_sRGBProfile() else { return nil }
            defer { cmsCloseProfile(reference) }
            guard let target = Self.colorants(of: reference), let inverse = Self.inverse(target) else { return nil }
            let matrix = Self.product(inverse, source)
            // Finite and small: the loop's sums must not overflow.
            guard matrix.allSatisfy({ $0.isFinite && abs($0) < 64 }) else { return nil }
            let fixed = scale * Double(1 << Self.fractionBits)
            contributions = (0..<3).flatMap { input in
                (0..<3).flatMap { output in curves[input].map { Int32((matrix[output * 3 + input] * $0 * fixed).rounded()) } }
            }
        }
        outputCurve = (0...Self.linearMaximum).map { step in
            let linear = Double(step) / Double(Self.linearMaximum)
            let encoded = linear <= 0.003_130_8 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
            return UInt8(max(0, min(255, (encoded * 255).rounded())))
        }
    }

    /// Converts `count` pixels of `bytesPerPixel` bytes (colour first, then
    /// alpha, which is copied); `source` and `target` may be the same.
    func convert(_ source: UnsafeRawPointer, into target: UnsafeMutableRawPointer, count: Int, bytesPerPixel: Int) {
        let input = source.assumingMemoryBound(to: UInt8.self)
        let output = target.assumingMemoryBound(to: UInt8.self)
        outputCurve.withUnsafeBufferPointer { curve in
            contributions.withUnsafeBufferPointer { table in
                if isGray {
                    for pixel in 0..<count {
                        let offset = pixel &* bytesPerPixel
                        output[offset] = curve[Int(table[Int(input[offset])])]
                        if bytesPerPixel == 2 { output[offset &+ 1] = input[offset &+ 1] }
                    }
                } else if bytesPerPixel == 3 {
                    for pixel in 0..<count { Self.convertPixel(input + pixel &* 3, output + pixel &* 3, table, curve) }
                } else {
                    for pixel in 0..<count {
                        let offset = pixel &* bytesPerPixel
                        let alpha = input[offset &+ 3]
                        Self.convertPixel(input + offset, output + offset, table, curve)
                        output[offset &+ 3] = alpha
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func convertPixel(
        _ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, _ table: UnsafeBufferPointer<Int32>,
        _ curve: UnsafeBufferPointer<UInt8>
    ) {
        let r = Int(input[0])
        let g = 768 &+ Int(input[1])
        let b = 1536 &+ Int(input[2])
        let round: Int32 = 1 << (fractionBits - 1)
        let maximum = Int32(linearMaximum)
        let x = (table[r] &+ table[g] &+ table[b] &+ round) >> fractionBits
        let y = (table[r &+ 256] &+ table[g &+ 256] &+ table[b &+ 256] &+ round) >> fractionBits
        let z = (table[r &+ 512] &+ table[g &+ 512] &+ table[b &+ 512] &+ round) >> fractionBits
        output[0] = curve[Int(min(max(x, 0), maximum))]
        output[1] = curve[Int(min(max(y, 0), maximum))]
        output[2] = curve[Int(min(max(z, 0), maximum))]
    }

    /// The profile's colorants (its PCS XYZ for full red, green and blue),
    /// as the columns of a row-major matrix.
    private static func colorants(of profile: cmsHPROFILE) -> [Double]? {
        var columns: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let xyz = cmsReadTag(profile, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee else { return nil }
            columns.append(xyz)
        }
        return [
            columns[0].X, columns[1].X, columns[2].X,
            columns[0].Y, columns[1].Y, columns[2].Y,
            columns[0].Z, columns[1].Z, columns[2].Z,
        ]
    }

    private static func product(_ a: [Double], _ b: [Double]) -> [Double] {
        (0..<9).map { index in
            let (row, column) = (index / 3, index % 3)
            return (0..<3).reduce(0) { $0 + a[row * 3 + $1] * b[$1 * 3 + column] }
        }
    }

    private static func inverse(_ m: [Double]) -> [Double]? {
        let cofactors: [Double] = [
            m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
            m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
            m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
        ]
        let determinant = m[0] * cofactors[0] + m[1] * cofactors[3] + m[2] * cofactors[6]
        guard abs(determinant) > 1e-9 else { return nil }
        return cofactors.map { $0 / determinant }
    }
}
