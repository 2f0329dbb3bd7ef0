import Foundation

/// CIE L* (lightness, 0-100) of 8-bit sRGB pixels, and the pixels with
/// their lightness changed and their hue and chroma (Lab a* and b*) kept:
/// what ``ImageProcessors/Sharpen`` works on, as libvips sharpens the L
/// of LabS. D65 white, the sRGB primaries and transfer curve.
///
/// The powers are tables (built once, read through ``withTables(_:)``):
/// sRGB bytes to linear light, linear light back to the nearest byte,
/// and Lab's f, the cube root, interpolated on 4,096 steps (within
/// 0.001 of L*), which is what makes the per-pixel work cheap.
enum CIELightness {
    /// Linear light of each sRGB byte, 0...1.
    private static let linear: [Float] = (0..<256).map { Float(decode(Double($0) / 255)) }

    /// The linear values halfway between consecutive bytes: a linear value
    /// encodes to the number of these at or below it (exact rounding to
    /// the nearest byte, with no power function).
    private static let byteThresholds: [Float] = (0..<255).map { Float(decode((Double($0) + 0.5) / 255)) }

    /// Lab's f at `index / steps` for `index` in 0...steps.
    private static let steps = 4_096
    private static let cubeRoots: [Float] = (0...steps).map { Float(f(Double($0) / Double(steps))) }

    /// L* of each gray byte, exact.
    private static let grayLightness: [Float] = (0..<256).map { Float(116 * f(decode(Double($0) / 255)) - 16) }

    /// The sRGB transfer curve, encoded to linear.
    private static func decode(_ value: Double) -> Double {
        value <= 0.040_45 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// Lab's f: the cube root above CIE's ε = (6/29)^3, a line below it.
    private static func f(_ value: Double) -> Double {
        value > 216 / 24_389 ? cbrt(value) : (24_389 / 27 * value + 16) / 116
    }

    /// Calls `body` with the tables.
    static func withTables<Result>(_ body: (Tables) -> Result) -> Result {
        linear.withUnsafeBufferPointer { linear in
            byteThresholds.withUnsafeBufferPointer { thresholds in
                cubeRoots.withUnsafeBufferPointer { cubeRoots in
                    grayLightness.withUnsafeBufferPointer { grayLightness in
                        body(Tables(linear: linear, thresholds: thresholds, cubeRoots: cubeRoots, grayLightness: grayLightness))
                    }
                }
            }
        }
    }

    /// The tables, and the conversions that read them.
    struct Tables {
        /// Linear light of each sRGB byte.
        let linear: UnsafeBufferPointer<Float>
        let thresholds: UnsafeBufferPointer<Float>
        let cubeRoots: UnsafeBufferPointer<Float>
        /// L* of each gray byte.
        let grayLightness: UnsafeBufferPointer<Float>

        /// sRGB to XYZ (D65), the rows for X, Y and Z; X and Z divided by
        /// the white point's, so that white is (1, 1, 1).
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

        /// Lab's f of a value in 0...1 (clamped), interpolated in the table.
        @inline(__always)
        func f(_ value: Float) -> Float {
            let steps = cubeRoots.count - 1
            let position = min(max(value, 0), 1) * Float(steps)
            let index = min(Int(position), steps - 1)
            let low = cubeRoots[index]
            return low + (cubeRoots[index + 1] - low) * (position - Float(index))
        }

        /// The inverse of f.
        @inline(__always)
        private func inverseF(_ value: Float) -> Float {
            let cube = value * value * value
            return cube > Self.epsilon ? cube : (116 * value - 16) / Self.kappa
        }

        /// L* of an sRGB colour.
        @inline(__always)
        func lightness(red: UInt8, green: UInt8, blue: UInt8) -> Float {
            let luminance = Self.toY.0 * linear[Int(red)] + Self.toY.1 * linear[Int(green)] + Self.toY.2 * linear[Int(blue)]
            return 116 * f(luminance) - 16
        }

        /// The nearest byte of a linear value (clamped to 0...1).
        @inline(__always)
        func byte(linear value: Float) -> UInt8 {
            var low = 0
            var high = thresholds.count
            while low < high {
                let middle = (low + high) / 2
                if thresholds[middle] <= value { low = middle + 1 } else { high = middle }
            }
            return UInt8(truncatingIfNeeded: low)
        }

        /// A gray byte with its L* raised by `change`: Lab's f of its
        /// luminance moves by `change / 116`.
        @inline(__always)
        func gray(_ gray: UInt8, changedBy change: Float) -> UInt8 {
            byte(linear: inverseF(f(linear[Int(gray)]) + change / 116))
        }

        /// An sRGB colour with its L* raised by `change`, a* and b* kept:
        /// a* and b* are differences of f(X), f(Y) and f(Z), so all three
        /// move by `change / 116`. A result outside the sRGB gamut is
        /// clamped channel by channel.
        @inline(__always)
        func color(red: UInt8, green: UInt8, blue: UInt8, changedBy change: Float) -> (UInt8, UInt8, UInt8) {
            let (r, g, b) = (linear[Int(red)], linear[Int(green)], linear[Int(blue)])
            let shift = change / 116
            let x = inverseF(f(Self.toX.0 * r + Self.toX.1 * g + Self.toX.2 * b) + shift)
            let y = inverseF(f(Self.toY.0 * r + Self.toY.1 * g + Self.toY.2 * b) + shift)
            let z = inverseF(f(Self.toZ.0 * r + Self.toZ.1 * g + Self.toZ.2 * b) + shift)
            return (
                byte(linear: Self.toRed.0 * x + Self.toRed.1 * y + Self.toRed.2 * z),
                byte(linear: Self.toGreen.0 * x + Self.toGreen.1 * y + Self.toGreen.2 * z),
                byte(linear: Self.toBlue.0 * x + Self.toBlue.1 * y + Self.toBlue.2 * z)
            )
        }
    }
}
