import CLcms2
import Foundation
import ImagoConcurrency

/// A Little CMS transform from a file's colour space to sRGB (perceptual
/// intent, no black point compensation, as browsers convert), for one
/// pixel layout in and one out.
///
/// Made once for each colour space and layout and kept (a profile with
/// lookup tables takes milliseconds to prepare); used by any number of
/// decode threads at once.
final class ColorTransform: @unchecked Sendable {
    // @unchecked: lcms2 transforms made without their one-pixel cache
    // (cmsFLAGS_NOCACHE) keep no state between calls, so one transform may
    // run on several threads at once; the handle is never changed.

    /// A pixel layout lcms reads or writes.
    enum Layout: Hashable, Sendable {
        case gray8, grayAlpha8, rgb8, rgba8
        /// 16 bits a channel, in the machine's byte order.
        case rgb16, rgba16
        /// Ink amounts, 255 full ink.
        case cmyk8
        /// Ink amounts stored inverted (255 no ink), as Adobe writes CMYK JPEGs.
        case invertedCMYK8

        var lcmsType: cmsUInt32Number {
            switch self {
            case .gray8: imago_TYPE_GRAY_8
            case .grayAlpha8: imago_TYPE_GRAYA_8
            case .rgb8: imago_TYPE_RGB_8
            case .rgba8: imago_TYPE_RGBA_8
            case .rgb16: imago_TYPE_RGB_16
            case .rgba16: imago_TYPE_RGBA_16
            case .cmyk8: imago_TYPE_CMYK_8
            case .invertedCMYK8: imago_TYPE_CMYK_8_REV
            }
        }

        var colorSpace: cmsColorSpaceSignature {
            switch self {
            case .gray8, .grayAlpha8: cmsSigGrayData
            case .rgb8, .rgba8, .rgb16, .rgba16: cmsSigRgbData
            case .cmyk8, .invertedCMYK8: cmsSigCmykData
            }
        }

        var hasAlpha: Bool { self == .grayAlpha8 || self == .rgba8 || self == .rgba16 }

        var bytesPerPixel: Int {
            switch self {
            case .gray8: 1
            case .grayAlpha8: 2
            case .rgb8: 3
            case .rgba8, .cmyk8, .invertedCMYK8: 4
            case .rgb16: 6
            case .rgba16: 8
            }
        }

        init(_ format: Image.PixelFormat) {
            switch format {
            case .gray8: self = .gray8
            case .grayAlpha8: self = .grayAlpha8
            case .rgb8: self = .rgb8
            case .rgba8: self = .rgba8
            }
        }
    }

    // What converts: lcms, or for 8-bit pixels of a matrix-shaper profile
    // (most embedded profiles), the faster MatrixShaper; one of the two.
    // Two optionals rather than an enum: an enum keeps its case in the
    // pointers' spare bits, which LeakSanitizer does not see through, and
    // transforms live in a static cache.
    private let handle: cmsHTRANSFORM?
    private let shaper: MatrixShaper?
    /// The layouts converted between.
    let input: Layout
    let output: Layout

    private init(handle: cmsHTRANSFORM?, shaper: MatrixShaper?, input: Layout, output: Layout) {
        self.handle = handle
        self.shaper = shaper
        self.input = input
        self.output = output
    }

    deinit {
        if let handle { cmsDeleteTransform(handle) }
    }

    /// The transform from `space` to sRGB for pixels in `input` written as
    /// `output`; nil when there is nothing to convert (`space` is sRGB),
    /// when the space cannot be used (a damaged profile, one for another
    /// kind of pixels than `input`'s, an HDR transfer), or when `output`
    /// is CMYK. Then the pixels are shown as stored, as browsers do. A
    /// profile over ``ImageMetadata/maximumBlockSize`` is not read (the
    /// largest real ones are a few hundred KB; every lookup hashes it).
    static func toSRGB(from space: DeclaredColorSpace, _ input: Layout, to output: Layout) -> ColorTransform? {
        if case .icc(let profile) = space, profile.count > ImageMetadata.maximumBlockSize { return nil }
        let key = Key(space: space, input: input, output: output)
        if let known = cache.withLock({ $0[key] }) { return known.transform }
        let made = make(from: space, key)
        cache.withLock { cache in
            if cache.count >= maximumCachedCount { cache.removeAll(keepingCapacity: true) }
            cache[key] = Entry(transform: made)
        }
        return made
    }

    /// Converts `count` pixels from `source` (in ``input``) to `target` (in
    /// ``output``); the two may be the same memory when the layouts are the
    /// same size.
    func convert(_ source: UnsafeRawPointer, into target: UnsafeMutableRawPointer, count: Int) {
        if let shaper {
            shaper.convert(source, into: target, count: count, bytesPerPixel: input.bytesPerPixel)
        } else if let handle {
            cmsDoTransform(handle, source, target, cmsUInt32Number(count))
        }
    }

    /// `rows` rows of `width` pixels, `sourceStride` and `targetStride` bytes apart.
    func convert(
        _ source: UnsafeRawPointer, stride sourceStride: Int, into target: UnsafeMutableRawPointer, stride targetStride: Int,
        width: Int, rows: Int
    ) {
        if let handle {
            cmsDoTransformLineStride(
                handle, source, target, cmsUInt32Number(width), cmsUInt32Number(rows), cmsUInt32Number(sourceStride),
                cmsUInt32Number(targetStride), 0, 0
            )
        } else {
            for row in 0..<rows { convert(source + row * sourceStride, into: target + row * targetStride, count: width) }
        }
    }

    // MARK: - Making and keeping transforms

    /// The cache's key: the space's bytes in plain arrays, for the reason
    /// the handle and shaper are two optionals.
    private struct Key: Hashable {
        var profile: [UInt8]
        var numbers: [Int]
        var input: Layout
        var output: Layout

        init(space: DeclaredColorSpace, input: Layout, output: Layout) {
            switch space {
            case .icc(let data): (profile, numbers) = (Array(data), [])
            case .cicp(let primaries, let transfer): (profile, numbers) = ([], [1, primaries, transfer])
            case .pngChunks(let gamma, let chromaticities): (profile, numbers) = ([], [2, gamma ?? -1] + (chromaticities ?? []))
            }
            self.input = input
            self.output = output
        }
    }

    /// A cached answer, nil included: a space that cannot be converted is
    /// not tried again for every image.
    private struct Entry {
        var transform: ColorTransform?
    }

    /// A few dozen spaces cover a service's sources (sRGB, Display P3,
    /// Adobe RGB, a few camera and printer profiles); past that the cache
    /// starts again rather than growing with hostile inputs.
    private static let maximumCachedCount = 64
    private static let cache = Locked<[Key: Entry]>([:])

    private static func make(from space: DeclaredColorSpace, _ key: Key) -> ColorTransform? {
        guard key.input.colorSpace != cmsSigCmykData || key.output.colorSpace == cmsSigRgbData,
            key.output.colorSpace != cmsSigCmykData, key.input.hasAlpha == key.output.hasAlpha || !key.output.hasAlpha
        else { return nil }
        guard let source = space.makeProfile() else { return nil }
        defer { cmsCloseProfile(source) }
        guard cmsGetColorSpace(source) == key.input.colorSpace else { return nil }
        if key.input == key.output, key.input.bytesPerPixel <= 4, key.input.colorSpace != cmsSigCmykData,
            let shaper = MatrixShaper(source)
        {
            return ColorTransform(handle: nil, shaper: shaper, input: key.input, output: key.output)
        }
        let target = key.output.colorSpace == cmsSigGrayData ? DeclaredColorSpace.srgbGrayProfile() : cmsCreate_sRGBProfile()
        guard let target else { return nil }
        defer { cmsCloseProfile(target) }
        var flags = cmsUInt32Number(cmsFLAGS_NOCACHE)
        if key.input.hasAlpha && key.output.hasAlpha { flags |= cmsUInt32Number(cmsFLAGS_COPY_ALPHA) }
        if key.input.bytesPerPixel > 4 { flags |= cmsUInt32Number(cmsFLAGS_NOOPTIMIZE) }
        let handle = cmsCreateTransform(
            source, key.input.lcmsType, target, key.output.lcmsType, cmsUInt32Number(INTENT_PERCEPTUAL), flags
        )
        return handle.map { ColorTransform(handle: $0, shaper: nil, input: key.input, output: key.output) }
    }
}

extension Image {
    /// The image with its pixels converted to sRGB from `space`; the image
    /// itself when `space` is nil, is sRGB or cannot be used. The layout is
    /// kept (gray stays gray, with the sRGB curve). Consuming: an image no
    /// one else holds is converted in place.
    consuming func convertedToSRGB(from space: DeclaredColorSpace?) -> Image {
        let layout = ColorTransform.Layout(pixelFormat)
        guard let space, let transform = ColorTransform.toSRGB(from: space, layout, to: layout) else { return self }
        var image = consume self
        let (width, height, stride) = (image.width, image.height, image.bytesPerRow)
        image.pixels.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            transform.convert(base, stride: stride, into: base, stride: stride, width: width, rows: height)
        }
        return image
    }
}
