import Foundation

/// CIE L* (lightness, 0-100) of 8-bit sRGB pixels, and the pixels with
/// their lightness changed and their hue and chroma (Lab a* and b*) kept:
/// what ``ImageProcessors/Sharpen`` works on, as libvips sharpens the L
/// of LabS. D65 white, the sRGB primaries and transfer curve.
enum CIELightness {
    /// Linear light of each sRGB byte, 0...1.
    static let linear: [Float] = (0..<256).map { Float(decode(Double($0) / 255)) }

    /// The linear values halfway between consecutive bytes: a linear value
    /// encodes to the number of these at or below it (exact rounding to
    /// the nearest byte, with no power function).
    static let byteThresholds: [Float] = (0..<255).map { Float(decode((Double($0) + 0.5) / 255)) }

    /// L* of each gray byte.
    static let grayLightness: [Float] = linear.map { lightness(luminance: $0) }

    /// The sRGB transfer curve, encoded to linear.
    private static func decode(_ value: Double) -> Double {
        value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// sRGB to XYZ (D65), the rows for X, Y and Z; X and Z divided by the
    /// white point's, so that white is (1, 1, 1).
    private static let toX: (Float, Float, Float) = (0.412_456_4 / 0.950_47, 0.357_576_1 / 0.950_47, 0.180_437_5 / 0.950_47)
    private static let toY: (Float, Float, Float) = (0.212_672_9, 0.715_152_2, 0.072_175_0)
    private static let toZ: (Float, Float, Float) = (0.019_333_9 / 1.088_83, 0.119_192_0 / 1.088_83, 0.950_304_1 / 1.088_83)

    /// XYZ (D65, the white point's X and Z as 1) to linear sRGB.
    private static let toRed: (Float, Float, Float) = (3.240_454_2 * 0.950_47, -1.537_138_5, -0.498_531_4 * 1.088_83)
    private static let toGreen: (Float, Float, Float) = (-0.969_266_0 * 0.950_47, 1.876_010_8, 0.041_556_0 * 1.088_83)
    private static let toBlue: (Float, Float, Float) = (0.055_643_4 * 0.950_47, -0.204_025_9, 1.057_225_2 * 1.088_83)

    /// CIE's ε = (6/29)^3 and κ = (29/3)^3: below ε, f is linear.
    private static let epsilon: Float = 216 / 24_389
    private static let kappa: Float = 24_389 / 27

    /// L* of a colour of relative luminance `luminance` (0...1).
    @inline(__always)
    static func lightness(luminance: Float) -> Float {
        luminance > epsilon ? 116 * cbrtf(luminance) - 16 : kappa * luminance
    }

    /// L* of an sRGB colour, from its linear components.
    @inline(__always)
    static func lightness(red: Float, green: Float, blue: Float) -> Float {
        lightness(luminance: toY.0 * red + toY.1 * green + toY.2 * blue)
    }

    /// Lab's f, with f(Y) = (L* + 16) / 116.
    @inline(__always)
    private static func f(_ value: Float) -> Float {
        value > epsilon ? cbrtf(value) : (kappa * value + 16) / 116
    }

    /// The inverse of f.
    @inline(__always)
    private static func inverseF(_ value: Float) -> Float {
        let cube = value * value * value
        return cube > epsilon ? cube : (116 * value - 16) / kappa
    }

    /// The nearest byte of a linear value (clamped to 0...1).
    @inline(__always)
    static func byte(linear value: Float, thresholds: UnsafeBufferPointer<Float>) -> UInt8 {
        var low = 0
        var high = thresholds.count
        while low < high {
            let middle = (low + high) / 2
            if thresholds[middle] <= value { low = middle + 1 } else { high = middle }
        }
        return UInt8(truncatingIfNeeded: low)
    }

    /// A gray's linear value with its L* raised by `change`: Lab's f of
    /// the luminance moves by `change / 116`.
    @inline(__always)
    static func gray(linear value: Float, changedBy change: Float) -> Float {
        inverseF(f(value) + change / 116)
    }

    /// A colour's linear components with its L* raised by `change`, a*
    /// and b* kept: a* and b* are differences of f(X), f(Y) and f(Z), so
    /// all three move by `change / 116`. The result may fall outside
    /// 0...1 (out of the sRGB gamut); ``byte(linear:thresholds:)`` clamps.
    @inline(__always)
    static func color(red: Float, green: Float, blue: Float, changedBy change: Float) -> (Float, Float, Float) {
        let shift = change / 116
        let x = inverseF(f(toX.0 * red + toX.1 * green + toX.2 * blue) + shift)
        let y = inverseF(f(toY.0 * red + toY.1 * green + toY.2 * blue) + shift)
        let z = inverseF(f(toZ.0 * red + toZ.1 * green + toZ.2 * blue) + shift)
        return (
            toRed.0 * x + toRed.1 * y + toRed.2 * z,
            toGreen.0 * x + toGreen.1 * y + toGreen.2 * z,
            toBlue.0 * x + toBlue.1 * y + toBlue.2 * z
        )
    }
}
