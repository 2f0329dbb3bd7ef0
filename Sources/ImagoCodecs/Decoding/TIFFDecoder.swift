import CTiff
import Foundation

/// Decodes TIFF with libtiff's RGBA interface, from memory: every
/// photometric interpretation libtiff converts (gray, palette, RGB, CMYK,
/// YCbCr, CIE L*a*b*), bit depths from 1 to 16 (reduced to 8), contiguous
/// or separate planes, strips or tiles, and the compressions Debian's
/// libtiff has (none, LZW, Deflate, PackBits, JPEG, CCITT fax, ...).
///
/// Output: ``Image/PixelFormat/gray8`` for gray images and
/// ``Image/PixelFormat/rgb8`` for the others, with alpha
/// (``Image/PixelFormat/grayAlpha8``, ``Image/PixelFormat/rgba8``) when
/// the file has an extra sample libtiff takes as alpha. Unassociated alpha
/// is returned as stored; associated (premultiplied) alpha is divided out.
/// The orientation tag is applied, so the image comes out upright. The
/// colours are converted to sRGB from the page's own ICC profile, unless
/// ``ImageDecodingOptions/convertsToSRGB`` is off.
///
/// ``ImageDecodingOptions/page`` picks the page of a multi-page file (the
/// first by default); no more than ``ImageDecodingOptions/maximumFrameCount``
/// pages are walked to find it. Pages are decoded whole, then resampled to
/// the target size. libtiff prints nothing: its messages become the
/// thrown error's detail, and a damaged strip or tile fails the decode.
public struct TIFFDecoder: ImageDecoding {
    /// Creates a TIFF decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .tiff }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let result = data.withUnsafeBytes { bytes -> Result<(Image, profile: Data?), ImageDecodingError> in
            Result { () throws(ImageDecodingError) in
                // The handle reads `bytes` in place: it is closed before they go.
                let file = try TIFFFile(bytes, maximumAllocation: Self.maximumAllocation(options))
                try Self.select(page: options.page, in: file, options: options)
                return (try Self.decodePage(file, options: options), options.convertsToSRGB ? file.iccProfile : nil)
            }
        }
        let (image, profile) = try result.get()
        // Scaled first: fewer pixels to convert.
        return options.scaled(image).convertedToSRGB(from: profile.map(DeclaredColorSpace.icc))
    }

    /// The most libtiff may allocate at once: a strip of the largest page
    /// allowed, 16-bit samples with alpha, and never less than 16 MiB.
    static func maximumAllocation(_ options: ImageDecodingOptions) -> Int {
        let (bytes, overflow) = max(0, options.maximumPixelCount).multipliedReportingOverflow(by: 8)
        return overflow ? Int.max : max(16 << 20, bytes)
    }

    /// Moves `file` to the page `page` (counted from 0), reading each
    /// directory before it.
    private static func select(page: Int, in file: TIFFFile, options: ImageDecodingOptions) throws(ImageDecodingError) {
        guard page != 0 else { return }
        guard page > 0 else { throw ImageDecodingError(code: .noSuchPage(page: page), format: .tiff, detail: "pages count from 0") }
        guard page < options.maximumFrameCount else {
            throw ImageDecodingError(code: .tooManyFrames(count: page + 1, limit: options.maximumFrameCount), format: .tiff)
        }
        for index in 1...page {
            guard TIFFLastDirectory(file.handle) == 0 else {
                throw ImageDecodingError(code: .noSuchPage(page: page), format: .tiff, detail: "the file has \(index) page\(index == 1 ? "" : "s")")
            }
            file.beginStep()
            guard TIFFReadDirectory(file.handle) == 1 else { throw file.error("page \(index) is unreadable") }
        }
    }

    /// Decodes the current directory.
    private static func decodePage(_ file: TIFFFile, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        guard let width = file.uint32(TIFFTAG_IMAGEWIDTH), let height = file.uint32(TIFFTAG_IMAGELENGTH) else {
            throw file.error("the page has no width or height")
        }
        try options.checkPixelCount(width: Int(width), height: Int(height), format: .tiff)
        if let strip = file.firstStripPastEnd() {
            throw ImageDecodingError(code: .corrupt, format: .tiff, detail: "strip or tile \(strip) lies past the end of the data")
        }
        // A small page with huge tiles would have libtiff allocate far more
        // than the page's pixels (which decode budgets are made of): 16
        // bytes a pixel is more than any sample layout libtiff converts.
        let chunkLimit = max(UInt64(16 << 20), UInt64(width) * UInt64(height) * 16)
        guard file.chunkSize <= chunkLimit else {
            throw ImageDecodingError(
                code: .corrupt, format: .tiff, detail: "a strip or tile of \(file.chunkSize) bytes for a page of \(width)x\(height) pixels")
        }
        // libtiff premultiplies unassociated alpha, which would lose precision
        // and need dividing out again: the page is said to be associated, so
        // that its samples are copied as they are.
        var extraSamples = file.extraSamples
        let alphaIsStraight = extraSamples.first == UInt16(EXTRASAMPLE_UNASSALPHA)
        if alphaIsStraight {
            extraSamples[0] = UInt16(EXTRASAMPLE_ASSOCALPHA)
            file.beginStep()
            guard file.setExtraSamples(extraSamples) else { throw file.error("unreadable extra samples") }
        }
        let reader = UnsafeMutablePointer<TIFFRGBAImage>.allocate(capacity: 1)
        reader.initialize(to: TIFFRGBAImage())
        defer { reader.deallocate() }
        var message = [CChar](repeating: 0, count: 1024)
        file.beginStep()
        guard TIFFRGBAImageBegin(reader, file.handle, 1, &message) == 1 else {
            // Its own message says why it cannot convert the page.
            let detail = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw detail.isEmpty ? file.error("libtiff cannot convert this page") : ImageDecodingError(code: .corrupt, format: .tiff, detail: detail)
        }
        defer { TIFFRGBAImageEnd(reader) }
        let stored = reader.pointee
        guard Int(stored.width) == Int(width), Int(stored.height) == Int(height) else {
            throw ImageDecodingError(code: .corrupt, format: .tiff, detail: "inconsistent sizes")
        }
        // Rows as stored: libtiff flips for the orientation tag, but cannot
        // transpose (orientations 5-8); ImageOrientation does all eight below.
        reader.pointee.req_orientation = stored.orientation
        // libtiff's raster: a 32-bit value a pixel. Zeroed, so that nothing
        // the decode does not write can show what the memory held before.
        var raster = [UInt8](repeating: 0, count: Int(width) * Int(height) * 4)
        file.beginStep()
        let status = raster.withUnsafeMutableBytes { bytes in
            bytes.withMemoryRebound(to: UInt32.self) { TIFFRGBAImageGet(reader, $0.baseAddress, width, height) }
        }
        guard status == 1 else { throw file.error("unreadable pixel data") }
        let isGray = stored.photometric == PHOTOMETRIC_MINISBLACK || stored.photometric == PHOTOMETRIC_MINISWHITE
        let hasAlpha = stored.alpha != 0
        let pixelFormat: Image.PixelFormat = isGray ? (hasAlpha ? .grayAlpha8 : .gray8) : (hasAlpha ? .rgba8 : .rgb8)
        let pixels = Self.pixels(consume raster, as: pixelFormat, premultiplied: hasAlpha && !alphaIsStraight)
        guard let image = Image(width: Int(width), height: Int(height), pixelFormat: pixelFormat, pixels: pixels) else {
            throw ImageDecodingError(code: .corrupt, format: .tiff, detail: "inconsistent sizes")
        }
        return (ImageOrientation(rawValue: Int(stored.orientation)) ?? .up).apply(to: image)
    }

    /// libtiff's raster (32-bit values, R in the lowest byte, A in the
    /// highest) as `format`, premultiplied colour divided by alpha; gray
    /// is the red channel (libtiff repeats it in all three). RGBA is
    /// written over the raster itself, so a page with alpha needs one
    /// buffer, not two.
    static func pixels(_ raster: consuming [UInt8], as format: Image.PixelFormat, premultiplied: Bool) -> [UInt8] {
        let channels = format.bytesPerPixel
        let colorChannels = format.hasAlpha ? channels - 1 : channels
        let count = raster.count / 4
        /// Writes pixel `index` at `output`: its bytes come before the next
        /// pixel's in the raster, so the raster can be its own output.
        func convert(_ raster: UnsafeRawBufferPointer, _ index: Int, to output: UnsafeMutablePointer<UInt8>) {
            let value = raster.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)
            let alpha = value >> 24
            let divides = premultiplied && alpha < 255
            for channel in 0..<colorChannels {
                var sample = value >> UInt32(8 * channel) & 0xFF
                if divides { sample = alpha == 0 ? 0 : min(255, (sample * 255 + alpha / 2) / alpha) }
                output[channel] = UInt8(truncatingIfNeeded: sample)
            }
            if colorChannels < channels { output[colorChannels] = UInt8(truncatingIfNeeded: alpha) }
        }
        if format == .rgba8 {
            raster.withUnsafeMutableBytes { bytes in
                guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                for index in 0..<count { convert(UnsafeRawBufferPointer(bytes), index, to: base + index * 4) }
            }
            return raster
        }
        return [UInt8](unsafeUninitializedCapacity: count * channels) { output, initialized in
            raster.withUnsafeBytes { bytes in
                guard let base = output.baseAddress else { return }
                for index in 0..<count { convert(bytes, index, to: base + index * channels) }
            }
            initialized = count * channels
        }
    }
}
