import Foundation

/// Decodes ICO and CUR files without a library: the directory is read,
/// one image is picked, and it is decoded as the PNG it embeds (with
/// ``PNGDecoder``) or as a bitmap without a file header: its colour rows,
/// then a 1-bit transparency mask (with the bitmap code ``BMPDecoder``
/// uses).
///
/// The image picked is the one that best covers
/// ``ImageDecodingOptions/targetSize``: the smallest at least as large as
/// the target (by the content mode), else the largest; without a target
/// size, the largest. Ties go to the deepest colour, then to the first
/// listed. Sizes are the images' own (their PNG or bitmap header), not the
/// directory's, which stops at 256. Entries whose data lies outside the
/// file, or whose header cannot be read, are skipped; with none left, the
/// error names the first unreadable header.
///
/// Output: what ``PNGDecoder`` gives for a PNG entry; for a bitmap,
/// ``Image/PixelFormat/rgba8`` when it has transparent pixels (its alpha
/// channel if it has one that is not zero everywhere, else its mask), else
/// ``Image/PixelFormat/rgb8``. Run-length encoded bitmaps in an icon are
/// refused.
public struct ICODecoder: ImageDecoding {
    /// Creates an ICO decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .ico }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let result = data.withUnsafeBytes { bytes -> Result<Image, ImageDecodingError> in
            Result { () throws(ImageDecodingError) in
                let directory = try ICODirectory(bytes)
                let entry = try directory.entry(for: options)
                guard let entryBytes = bytes.slice(at: entry.offset, length: entry.length) else {
                    throw ImageDecodingError(code: .corrupt, format: .ico, detail: "entry \(entry.index) is outside the file")
                }
                if entry.isPNG { return try Self.decodePNG(Data(entryBytes), entry: entry, options: options) }
                return options.scaled(try Self.decodeBitmap(entryBytes, options: options))
            }
        }
        return try result.get()
    }

    /// An embedded PNG, its errors reported as the icon's.
    private static func decodePNG(_ data: Data, entry: ICODirectory.Entry, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        do {
            return try PNGDecoder().decode(data, options: options)
        } catch {
            var wrapped = error
            wrapped.format = .ico
            wrapped.detail = "entry \(entry.index) (PNG): " + (error.detail.isEmpty ? error.description : error.detail)
            throw wrapped
        }
    }

    /// A bitmap entry: the header (its height counts the mask's rows too),
    /// the colour table, the colour rows, then the mask's rows (1 bit a
    /// pixel, set where the image is transparent), both bottom row first.
    static func decodeBitmap(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let bitmap = try DIB(bytes, at: 0, format: .ico, isIcon: true)
        guard bitmap.compression == .none else {
            throw ImageDecodingError(code: .corrupt, format: .ico, detail: "run-length encoded icon bitmaps are not supported")
        }
        var canvas = try bitmap.decode(bytes, pixelsAt: bitmap.colorTableEnd, options: options)
        // The mask is used when the colours have no alpha of their own, as
        // a 32-bit icon whose alpha is zero everywhere has none.
        if !bitmap.hasAlphaChannel || canvas.alphaChannelIsEmpty {
            let maskStride = (bitmap.width + 31) / 32 * 4
            let maskStart = bitmap.colorTableEnd + bitmap.stride * bitmap.height
            let (maskLength, overflow) = maskStride.multipliedReportingOverflow(by: bitmap.height)
            if !overflow, let mask = bytes.slice(at: maskStart, length: maskLength) {
                canvas.apply(mask: mask, stride: maskStride, row: bitmap.canvasRow)
            } else if !bitmap.hasAlphaChannel {
                throw ImageDecodingError(code: .corrupt, format: .ico, detail: "truncated transparency mask")
            }
        }
        return try canvas.image(format: .ico)
    }
}

extension Canvas {
    /// Makes transparent the pixels whose bit is set in `mask` (rows of
    /// `stride` bytes, stored row r going to canvas row `row(r)`).
    mutating func apply(mask: UnsafeRawBufferPointer, stride: Int, row: (Int) -> Int) {
        var transparent = false
        for storedRow in 0..<height {
            let target = row(storedRow) * width
            for x in 0..<width where mask[storedRow * stride + x >> 3] & (0x80 >> UInt8(x & 7)) != 0 {
                pixels[(target + x) * 4 + 3] = 0
                transparent = true
            }
        }
        if transparent { isOpaque = false }
    }
}

/// An ICO or CUR file's directory: a 6-byte header (0, the type: 1 for
/// icons, 2 for cursors, the entry count), then 16 bytes an entry.
struct ICODirectory {
    /// One image of the file.
    struct Entry {
        /// Its place in the directory, from 0.
        var index: Int
        var offset: Int
        var length: Int
        /// The size its own header declares.
        var size: ImageSize
        /// Bits per pixel: the bitmap's, or the PNG's bit depth times its channels.
        var bitDepth: Int
        var isPNG: Bool
    }

    /// The entries whose data is in the file and starts with a readable
    /// header, in directory order.
    let entries: [Entry]

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads the directory; an error if it is damaged or has no usable entry.
    init(_ bytes: UnsafeRawBufferPointer) throws(ImageDecodingError) {
        guard bytes.littleEndian(at: 0, size: 2) == 0, let type = bytes.littleEndian(at: 2, size: 2), type == 1 || type == 2,
            let count = bytes.littleEndian(at: 4, size: 2), count > 0
        else {
            throw ImageDecodingError(code: .corrupt, format: .ico, detail: "not an icon directory")
        }
        guard bytes.slice(at: 6, length: count * 16) != nil else {
            throw ImageDecodingError(code: .corrupt, format: .ico, detail: "truncated directory (\(count) entries declared)")
        }
        var entries: [Entry] = []
        var firstError: ImageDecodingError?
        for index in 0..<count {
            do throws(ImageDecodingError) {
                if let entry = try Self.entry(index, in: bytes) { entries.append(entry) }
            } catch {
                firstError = firstError ?? error
            }
        }
        guard !entries.isEmpty else {
            throw firstError ?? ImageDecodingError(code: .corrupt, format: .ico, detail: "no entry of the \(count) has its data inside the file")
        }
        self.entries = entries
    }

    /// Entry `index`: nil if its data is not inside the file, an error if
    /// it is neither a PNG with its header nor a bitmap with a readable one.
    private static func entry(_ index: Int, in bytes: UnsafeRawBufferPointer) throws(ImageDecodingError) -> Entry? {
        let position = 6 + index * 16
        guard let length = bytes.littleEndian(at: position + 8, size: 4), let offset = bytes.littleEndian(at: position + 12, size: 4),
            length > 0, let data = bytes.slice(at: offset, length: length)
        else { return nil }
        if data.starts(with: pngSignature) {
            // IHDR: width and height (big-endian), bit depth, colour type.
            guard let width = data.integer(at: 16, size: 4, bigEndian: true), let height = data.integer(at: 20, size: 4, bigEndian: true),
                let depth = data.integer(at: 24, size: 1, bigEndian: true), let colorType = data.integer(at: 25, size: 1, bigEndian: true)
            else { throw ImageDecodingError(code: .corrupt, format: .ico, detail: "entry \(index) (PNG): truncated header") }
            let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colorType] ?? 1
            let size = ImageSize(width: width, height: height)
            return Entry(index: index, offset: offset, length: length, size: size, bitDepth: depth * channels, isPNG: true)
        }
        let bitmap = try DIB(data, at: 0, format: .ico, isIcon: true)
        let size = ImageSize(width: bitmap.width, height: bitmap.height)
        return Entry(index: index, offset: offset, length: length, size: size, bitDepth: bitmap.bitCount, isPNG: false)
    }

    /// The entry to decode for `options`: the smallest that covers the
    /// target size without enlarging, else the largest; the largest without
    /// a target. Entries over the pixel limit are not candidates; if all
    /// are, the limit's error.
    func entry(for options: ImageDecodingOptions) throws(ImageDecodingError) -> Entry {
        let area = Self.area
        let allowed = entries.filter { area($0) <= options.maximumPixelCount }
        guard !allowed.isEmpty else {
            let smallest = entries.min { area($0) < area($1) } ?? entries[0]
            try options.checkPixelCount(width: smallest.size.width, height: smallest.size.height, format: .ico)
            return smallest
        }
        // Larger area first; at the same area, deeper colour; then directory order.
        func isBetter(_ a: Entry, _ b: Entry, smaller: Bool) -> Bool {
            if area(a) != area(b) { return smaller ? area(a) < area(b) : area(a) > area(b) }
            if a.bitDepth != b.bitDepth { return a.bitDepth > b.bitDepth }
            return a.index < b.index
        }
        func best(_ candidates: [Entry], smaller: Bool) -> Entry? {
            candidates.min { isBetter($0, $1, smaller: smaller) }
        }
        if let target = options.targetSize, target.width > 0, target.height > 0 {
            let covering = allowed.filter { entry in
                let wide = entry.size.width >= target.width
                let tall = entry.size.height >= target.height
                return options.contentMode == .fill ? wide && tall : wide || tall
            }
            if let entry = best(covering, smaller: true) { return entry }
        }
        return best(allowed, smaller: false) ?? allowed[0]
    }

    /// The largest entry's size: what a decode without a target size gives.
    var largestSize: ImageSize? { entries.max { Self.area($0) < Self.area($1) }?.size }

    /// An entry's pixel count (a PNG's sizes are 32-bit: saturated, not overflowed).
    static func area(_ entry: Entry) -> Int {
        let (pixels, overflow) = entry.size.width.multipliedReportingOverflow(by: entry.size.height)
        return overflow ? Int.max : pixels
    }
}
