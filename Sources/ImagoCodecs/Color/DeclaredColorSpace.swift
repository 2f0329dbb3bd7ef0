import CLcms2
import Foundation

/// The colour space a file declares for its pixels, as read from it: what
/// ``ColorTransform`` converts to sRGB from.
enum DeclaredColorSpace: Hashable, Sendable {
    /// An ICC profile (JPEG APP2, PNG iCCP, WebP ICCP, AVIF and HEIC colr,
    /// JPEG XL).
    case icc(Data)
    /// Coding-independent code points (ITU-T H.273), as AVIF and HEIC nclx
    /// boxes declare them: colour primaries and transfer characteristics.
    case cicp(primaries: Int, transfer: Int)
    /// PNG's gAMA and cHRM chunks, as stored (times 100,000): the encoding
    /// gamma, and the white point, red, green and blue x and y.
    case pngChunks(gamma: Int?, chromaticities: [Int]?)

    /// A new lcms profile for this colour space; nil when it is sRGB (or
    /// as good as: nothing to convert), or when it cannot be used (a damaged
    /// profile, an unknown code point, an HDR transfer), in which case the
    /// pixels are shown as stored, as browsers show them. The caller closes
    /// the profile.
    func makeProfile() -> cmsHPROFILE? {
        switch self {
        case .icc(let data):
            guard data.count >= 128, data.count <= Int(UInt32.max) else { return nil }
            let profile = data.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }
            guard let profile else { return nil }
            if Self.isSRGB(profile) {
                cmsCloseProfile(profile)
                return nil
            }
            return profile
        case .cicp(let primaries, let transfer):
            guard let curve = Self.cicpCurve(transfer), let primaries = Self.cicpPrimaries(primaries) else { return nil }
            guard !(primaries == Self.srgbPrimaries && curve == .srgb) else { return nil }
            return Self.rgbProfile(primaries, curve)
        case .pngChunks(let gamma, let chromaticities):
            let primaries =
                chromaticities.flatMap { values -> Primaries? in
                    guard values.count == 8, values.allSatisfy({ $0 > 0 && $0 < 100_000 }) else { return nil }
                    let xy = values.map { Double($0) / 100_000 }
                    return Primaries(white: (xy[0], xy[1]), red: (xy[2], xy[3]), green: (xy[4], xy[5]), blue: (xy[6], xy[7]))
                } ?? Self.srgbPrimaries
            var curve = ToneCurve.srgb
            if let gamma, gamma > 0 {
                // 1/2.2 (45455) is how most encoders label sRGB: within 2%,
                // it is taken for the sRGB curve, as browsers do.
                let exponent = 100_000 / Double(gamma)
                curve = abs(exponent - 2.2) < 0.044 ? .srgb : .gamma(exponent)
            }
            guard exponentIsSane(curve), !(primaries.isClose(to: Self.srgbPrimaries) && curve == .srgb) else { return nil }
            return Self.rgbProfile(primaries, curve)
        }
    }

    private func exponentIsSane(_ curve: ToneCurve) -> Bool {
        guard case .gamma(let exponent) = curve else { return true }
        return exponent >= 0.2 && exponent <= 5
    }

    // MARK: - Building profiles

    /// Chromaticities (CIE x, y) of a white point and three primaries.
    struct Primaries: Equatable {
        var white: (Double, Double)
        var red: (Double, Double)
        var green: (Double, Double)
        var blue: (Double, Double)

        static func == (lhs: Primaries, rhs: Primaries) -> Bool { lhs.isClose(to: rhs, tolerance: 0) }

        func isClose(to other: Primaries, tolerance: Double = 0.0005) -> Bool {
            zip([white, red, green, blue], [other.white, other.red, other.green, other.blue]).allSatisfy {
                abs($0.0 - $1.0) <= tolerance && abs($0.1 - $1.1) <= tolerance
            }
        }
    }

    /// A transfer function, from stored values to linear light.
    enum ToneCurve: Equatable {
        case srgb
        case gamma(Double)
    }

    static let d65 = (0.3127, 0.3290)
    static let srgbPrimaries = Primaries(white: d65, red: (0.64, 0.33), green: (0.30, 0.60), blue: (0.15, 0.06))

    /// H.273's colour primaries, those a still image uses.
    static func cicpPrimaries(_ code: Int) -> Primaries? {
        switch code {
        case 1, 2: srgbPrimaries  // BT.709; unspecified is taken as sRGB, as browsers do
        case 4: Primaries(white: (0.310, 0.316), red: (0.67, 0.33), green: (0.21, 0.71), blue: (0.14, 0.08))
        case 5: Primaries(white: d65, red: (0.64, 0.33), green: (0.29, 0.60), blue: (0.15, 0.06))
        case 6, 7: Primaries(white: d65, red: (0.630, 0.340), green: (0.310, 0.595), blue: (0.155, 0.070))
        case 9: Primaries(white: d65, red: (0.708, 0.292), green: (0.170, 0.797), blue: (0.131, 0.046))
        case 11: Primaries(white: (0.314, 0.351), red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060))
        case 12: Primaries(white: d65, red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060))  // Display P3
        case 22: Primaries(white: d65, red: (0.630, 0.340), green: (0.295, 0.605), blue: (0.155, 0.077))
        default: nil
        }
    }

    /// H.273's transfer characteristics; nil for PQ and HLG (HDR, which
    /// would need tone mapping) and unknown codes. The SDR video curves
    /// (BT.709, BT.601, BT.2020) are shown with the sRGB curve, as browsers
    /// show them.
    static func cicpCurve(_ code: Int) -> ToneCurve? {
        switch code {
        case 1, 2, 6, 13, 14, 15: .srgb
        case 4: .gamma(2.2)
        case 5: .gamma(2.8)
        case 8: .gamma(1)
        default: nil
        }
    }

    static func rgbProfile(_ primaries: Primaries, _ curve: ToneCurve) -> cmsHPROFILE? {
        var white = cmsCIExyY(x: primaries.white.0, y: primaries.white.1, Y: 1)
        var colorants = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: primaries.red.0, y: primaries.red.1, Y: 1),
            Green: cmsCIExyY(x: primaries.green.0, y: primaries.green.1, Y: 1),
            Blue: cmsCIExyY(x: primaries.blue.0, y: primaries.blue.1, Y: 1)
        )
        guard let tone = makeCurve(curve) else { return nil }
        defer { cmsFreeToneCurve(tone) }
        let curves: [OpaquePointer?] = [tone, tone, tone]
        return cmsCreateRGBProfile(&white, &colorants, curves)
    }

    static func makeCurve(_ curve: ToneCurve) -> OpaquePointer? {
        switch curve {
        case .gamma(let exponent):
            return cmsBuildGamma(nil, exponent)
        case .srgb:
            // IEC 61966-2-1: Y = ((aX + b)^g for X >= d, else cX.
            let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
            return cmsBuildParametricToneCurve(nil, 4, parameters)
        }
    }

    /// A gray profile with the sRGB curve: what gray pixels are converted to.
    static func srgbGrayProfile() -> cmsHPROFILE? {
        guard let tone = makeCurve(.srgb) else { return nil }
        defer { cmsFreeToneCurve(tone) }
        return cmsCreateGrayProfile(cmsD50_xyY(), tone)
    }

    // MARK: - Recognising sRGB

    /// Whether `profile` is a matrix-shaper RGB profile with sRGB's
    /// colorants and curve: most JPEGs that embed a profile embed sRGB's,
    /// and converting from it would change nothing but the time spent.
    static func isSRGB(_ profile: cmsHPROFILE) -> Bool {
        guard cmsGetColorSpace(profile) == cmsSigRgbData, cmsIsMatrixShaper(profile) != 0 else { return false }
        guard let reference = cmsCreate_sRGBProfile() else { return false }
        defer { cmsCloseProfile(reference) }
        let colorants = [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag]
        for tag in colorants {
            guard let found = cmsReadTag(profile, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee,
                let expected = cmsReadTag(reference, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee,
                abs(found.X - expected.X) < 0.002, abs(found.Y - expected.Y) < 0.002, abs(found.Z - expected.Z) < 0.002
            else { return false }
        }
        guard let expected = cmsReadTag(reference, cmsSigRedTRCTag).map(OpaquePointer.init) else { return false }
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let curve = cmsReadTag(profile, tag).map(OpaquePointer.init) else { return false }
            // Within a third of an 8-bit step everywhere sampled.
            for step in 0...32 {
                let x = Float(step) / 32
                guard abs(cmsEvalToneCurveFloat(curve, x) - cmsEvalToneCurveFloat(expected, x)) < 0.0013 else { return false }
            }
        }
        return true
    }
}
