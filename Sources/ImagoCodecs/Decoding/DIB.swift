import Foundation

/// A device-independent bitmap: what follows a BMP's file header, and what
/// an ICO entry that is not a PNG holds. Its header (BITMAPCOREHEADER,
/// BITMAPINFOHEADER and Adobe's two extensions of it, BITMAPV4HEADER,
/// BITMAPV5HEADER) is read with every offset and size checked against the
/// bytes, which come from the network.
struct DIB {
    /// How the pixels are stored.
    enum Compression: Equatable {
        /// Rows of pixels as they are (with masks for 16 and 32 bits).
        case none
        /// Runs of 8-bit palette indices.
        case rle8
        /// Runs of 4-bit palette indices.
        case rle4
    }

    /// The format errors are reported for (BMP, or ICO for an icon's bitmap).
    let format: ImageFormat
    let width: Int
    /// The image's rows; an icon's header declares twice as many (the
    /// colour bitmap, then the transparency mask).
    let height: Int
    /// Whether the first stored row is the top one (a negative height);
    /// bitmaps are stored bottom row first otherwise.
    let isTopDown: Bool
    let bitCount: Int
    let compression: Compression
    /// Red, green, blue and alpha masks of 16- and 32-bit pixels.
    let masks: [ChannelMask]
    /// Whether a 32-bit pixel's alpha channel may be transparent (a
    /// channel of zeros is opaque, as browsers show it).
    let hasAlphaChannel: Bool
    /// 256 RGBA entries (the missing ones opaque black), for bit counts up to 8.
    let palette: [UInt8]
    /// Where the header, its masks and its colour table end: an icon's
    /// pixels start there.
    let colorTableEnd: Int
    /// Where the BITMAPV5HEADER's embedded ICC profile is, if it has one.
    let profile: Range<Int>?

    private static let biRGB = 0
    private static let biRLE8 = 1
    private static let biRLE4 = 2
    private static let biBitfields = 3
    private static let biAlphaBitfields = 6
    /// bV5CSType for a profile embedded in the file: 'MBED'.
    private static let profileEmbedded = 0x4D42_4544

    /// Reads the header at `offset` in `bytes`; `isIcon` halves the
    /// height, as an icon's header counts the mask's rows too.
    init(_ bytes: UnsafeRawBufferPointer, at offset: Int, format: ImageFormat, isIcon: Bool = false) throws(ImageDecodingError) {
        self.format = format
        func corrupt(_ detail: String) -> ImageDecodingError { ImageDecodingError(code: .corrupt, format: format, detail: detail) }
        guard let headerSize = bytes.littleEndian(at: offset, size: 4) else { throw corrupt("truncated bitmap header") }
        guard [12, 40, 52, 56, 108, 124].contains(headerSize) else {
            throw corrupt("unsupported bitmap header size \(headerSize) (OS/2 2.x headers are not read)")
        }
        guard let header = bytes.slice(at: offset, length: headerSize) else { throw corrupt("truncated bitmap header") }
        func field(_ position: Int, _ size: Int) -> Int { header.littleEndian(at: position, size: size) ?? 0 }
        let storedHeight: Int
        var compressionCode = Self.biRGB
        var colorCount = 0
        var maskValues: [Int]? = nil
        if headerSize == 12 {
            // BITMAPCOREHEADER: unsigned 16-bit sizes, a full colour table of RGB triples.
            width = field(4, 2)
            storedHeight = field(6, 2)
            bitCount = field(10, 2)
        } else {
            width = Int(Int32(truncatingIfNeeded: field(4, 4)))
            storedHeight = Int(Int32(truncatingIfNeeded: field(8, 4)))
            bitCount = field(14, 2)
            compressionCode = field(16, 4)
            colorCount = field(32, 4)
            if headerSize >= 52 {
                maskValues = (0..<(headerSize >= 56 ? 4 : 3)).map { field(40 + 4 * $0, 4) }
            }
        }
        guard width > 0 else { throw corrupt("the header declares a width of \(width)") }
        guard storedHeight != 0, storedHeight != Int(Int32.min) else { throw corrupt("the header declares a height of \(storedHeight)") }
        isTopDown = storedHeight < 0
        height = isIcon ? abs(storedHeight) / 2 : abs(storedHeight)
        guard height > 0 else { throw corrupt("the header declares a height of \(storedHeight)") }
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) else { throw corrupt("unsupported bit count \(bitCount)") }

        var tableStart = offset + headerSize
        switch (compressionCode, bitCount) {
        case (Self.biRGB, _):
            compression = .none
        case (Self.biRLE8, 8):
            compression = .rle8
        case (Self.biRLE4, 4):
            compression = .rle4
        case (Self.biBitfields, 16), (Self.biBitfields, 32), (Self.biAlphaBitfields, 16), (Self.biAlphaBitfields, 32):
            compression = .none
            if headerSize == 40 {
                // BITMAPINFOHEADER: the masks follow it.
                let maskCount = compressionCode == Self.biAlphaBitfields ? 4 : 3
                guard let stored = bytes.slice(at: tableStart, length: 4 * maskCount) else { throw corrupt("truncated bit masks") }
                maskValues = (0..<maskCount).map { stored.littleEndian(at: 4 * $0, size: 4) ?? 0 }
                tableStart += 4 * maskCount
            }
        case (Self.biRLE8, _), (Self.biRLE4, _), (Self.biBitfields, _), (Self.biAlphaBitfields, _):
            throw corrupt("compression \(compressionCode) with \(bitCount) bits per pixel")
        case (4, _), (5, _):
            throw corrupt("embedded \(compressionCode == 4 ? "JPEG" : "PNG") bitmaps are not supported")
        default:
            throw corrupt("unsupported compression \(compressionCode)")
        }
        guard !isTopDown || compression == .none else { throw corrupt("a run-length encoded bitmap cannot be top-down") }

        let isBitfields = compressionCode == Self.biBitfields || compressionCode == Self.biAlphaBitfields
        switch bitCount {
        case 16 where !isBitfields:
            masks = [0x7C00, 0x03E0, 0x001F, 0].map(ChannelMask.init)
            hasAlphaChannel = false
        case 32 where !isBitfields:
            // The fourth byte is reserved; browsers take it as alpha unless all of it is zero.
            masks = [0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000].map(ChannelMask.init)
            hasAlphaChannel = true
        case 16, 32:
            let values = (maskValues ?? []) + [0, 0, 0, 0]
            masks = values.prefix(4).map(ChannelMask.init)
            guard masks.allSatisfy(\.isContiguous) else { throw corrupt("a bit mask is not contiguous") }
            hasAlphaChannel = values[3] != 0
        default:
            masks = []
            hasAlphaChannel = false
        }

        // The colour table: for up to 8 bits per pixel, `colorCount` entries
        // (all of them when 0, at most as many as indices); more bits may
        // carry one too, which an icon's pixels follow.
        let entrySize = headerSize == 12 ? 3 : 4
        let indexCount = bitCount <= 8 ? 1 << bitCount : 0
        let entries = bitCount <= 8 ? (colorCount == 0 ? indexCount : min(colorCount, indexCount)) : colorCount
        // At most 2^32 entries of 4 bytes: no overflow. An icon's pixels that
        // a table too long pushes past the end are found missing later.
        colorTableEnd = tableStart + entries * entrySize
        var palette = [UInt8](repeating: 0, count: 256 * 4)
        if bitCount <= 8 {
            guard let table = bytes.slice(at: tableStart, length: entries * entrySize) else { throw corrupt("truncated colour table") }
            for index in 0..<entries {
                // Stored blue, green, red (then a reserved byte).
                palette[index * 4] = table[index * entrySize + 2]
                palette[index * 4 + 1] = table[index * entrySize + 1]
                palette[index * 4 + 2] = table[index * entrySize]
            }
        }
        for index in 0..<256 { palette[index * 4 + 3] = 255 }
        self.palette = palette

        profile = headerSize == 124 && field(56, 4) == Self.profileEmbedded ? Self.range(offset + field(112, 4), field(116, 4), in: bytes) : nil
    }

    /// `start..<start + length` if it is inside `bytes`.
    private static func range(_ start: Int, _ length: Int, in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        bytes.slice(at: start, length: length) == nil || length == 0 ? nil : start..<(start + length)
    }

    /// The bytes from one row to the next: rows are padded to 4 bytes.
    var stride: Int { (width * bitCount + 31) / 32 * 4 }

    /// The pixels, as stored from `offset` in `bytes` (the whole data: an
    /// icon's entry, or a BMP file), top row first, with an alpha channel
    /// that is transparent only where the bitmap says so (a 32-bit alpha
    /// channel, pixels a run-length encoding skips); `isOpaque` is whether
    /// it is 255 everywhere.
    func decode(_ bytes: UnsafeRawBufferPointer, pixelsAt offset: Int, options: ImageDecodingOptions) throws(ImageDecodingError) -> Canvas {
        try options.checkPixelCount(width: width, height: height, format: format)
        if compression == .none {
            // Checked before allocating: a short file that declares a large
            // image is refused at once. The last row need not be padded.
            let lastRow = (width * bitCount + 7) / 8
            let (rows, overflow) = stride.multipliedReportingOverflow(by: height - 1)
            guard !overflow, bytes.slice(at: offset, length: rows + lastRow) != nil else {
                throw ImageDecodingError(code: .corrupt, format: format, detail: "truncated pixel data")
            }
        }
        var canvas = Canvas(width: width, height: height)
        if compression == .none {
            canvas.pixels.withUnsafeMutableBufferPointer { output in decodeRows(bytes, from: offset, into: output) }
            if hasAlphaChannel { canvas.resolveAlphaChannel() } else { canvas.isOpaque = true }
        } else {
            try decodeRuns(bytes, from: offset, into: &canvas)
        }
        return canvas
    }

    /// The row of the canvas (top first) a stored row goes to.
    func canvasRow(_ storedRow: Int) -> Int { isTopDown ? storedRow : height - 1 - storedRow }

    private func decodeRows(_ bytes: UnsafeRawBufferPointer, from offset: Int, into output: UnsafeMutableBufferPointer<UInt8>) {
        for row in 0..<height {
            let source = offset + row * stride
            var target = canvasRow(row) * width * 4
            switch bitCount {
            case 1, 2, 4, 8:
                let indexMask = (1 << bitCount) - 1
                for x in 0..<width {
                    let bit = x * bitCount
                    let index = Int(bytes[source + bit >> 3]) >> (8 - bitCount - bit & 7) & indexMask
                    for channel in 0..<4 { output[target + channel] = palette[index * 4 + channel] }
                    target += 4
                }
            case 24:
                for x in 0..<width {
                    output[target] = bytes[source + x * 3 + 2]
                    output[target + 1] = bytes[source + x * 3 + 1]
                    output[target + 2] = bytes[source + x * 3]
                    output[target + 3] = 255
                    target += 4
                }
            default:
                let size = bitCount / 8
                for x in 0..<width {
                    var value: UInt32 = 0
                    for byte in 0..<size { value |= UInt32(bytes[source + x * size + byte]) << (8 * byte) }
                    output[target] = masks[0].value(of: value)
                    output[target + 1] = masks[1].value(of: value)
                    output[target + 2] = masks[2].value(of: value)
                    output[target + 3] = masks[3].isEmpty ? 255 : masks[3].value(of: value)
                    target += 4
                }
            }
        }
    }

    /// Decodes RLE8 or RLE4 runs onto `canvas`; the pixels they skip stay
    /// transparent, as browsers show them.
    private func decodeRuns(_ bytes: UnsafeRawBufferPointer, from start: Int, into canvas: inout Canvas) throws(ImageDecodingError) {
        let isRLE4 = compression == .rle4
        var offset = start
        var x = 0
        var y = 0
        var written = 0
        func put(_ index: Int, _ pixels: UnsafeMutableBufferPointer<UInt8>) {
            guard x < width, y < height else { return }
            let target = (canvasRow(y) * width + x) * 4
            for channel in 0..<4 { pixels[target + channel] = palette[index * 4 + channel] }
            written += 1
        }
        let finished: Bool = canvas.pixels.withUnsafeMutableBufferPointer { pixels in
            while y < height {
                guard offset >= 0, offset <= bytes.count - 2 else { return false }
                let count = Int(bytes[offset])
                let value = Int(bytes[offset + 1])
                offset += 2
                if count > 0 {
                    // A run: one index, or for RLE4 two alternating ones.
                    for step in 0..<count {
                        put(isRLE4 ? (step % 2 == 0 ? value >> 4 : value & 0x0F) : value, pixels)
                        x += 1
                    }
                    continue
                }
                switch value {
                case 0:  // end of line
                    x = 0
                    y += 1
                case 1:  // end of bitmap
                    return true
                case 2:  // delta: move right and up (down the stored order)
                    guard offset <= bytes.count - 2 else { return false }
                    x += Int(bytes[offset])
                    y += Int(bytes[offset + 1])
                    offset += 2
                default:
                    // Absolute mode: `value` indices as they are, padded to 16 bits.
                    let length = isRLE4 ? (value + 1) / 2 : value
                    guard length <= bytes.count - offset else { return false }
                    for step in 0..<value {
                        let byte = Int(bytes[offset + (isRLE4 ? step / 2 : step)])
                        put(isRLE4 ? (step % 2 == 0 ? byte >> 4 : byte & 0x0F) : byte, pixels)
                        x += 1
                    }
                    offset += length + length % 2
                }
            }
            return true
        }
        guard finished else { throw ImageDecodingError(code: .corrupt, format: format, detail: "truncated run-length data") }
        canvas.isOpaque = written == width * height
    }
}

/// One channel's bits in a 16- or 32-bit pixel.
struct ChannelMask {
    let mask: UInt32
    private let shift: UInt32
    /// The channel's largest value, once shifted down.
    private let maximum: UInt32
    private let bitCount: Int

    init(_ mask: Int) {
        self.mask = UInt32(truncatingIfNeeded: mask)
        shift = self.mask == 0 ? 0 : UInt32(self.mask.trailingZeroBitCount)
        maximum = self.mask >> shift
        bitCount = maximum.nonzeroBitCount
    }

    var isEmpty: Bool { mask == 0 }

    /// Whether the mask's bits are all together (an empty mask is).
    var isContiguous: Bool { maximum & (maximum &+ 1) == 0 }

    /// The channel's value in `pixel`, scaled to 0...255 (the top 8 bits of
    /// a wider channel); 0 for an empty mask.
    func value(of pixel: UInt32) -> UInt8 {
        guard maximum > 0 else { return 0 }
        let value = pixel >> shift & maximum
        if bitCount >= 8 { return UInt8(truncatingIfNeeded: value >> UInt32(bitCount - 8)) }
        return UInt8((value * 255 + maximum / 2) / maximum)
    }
}

/// A bitmap decoded to RGBA, top row first, before its output format is chosen.
struct Canvas {
    let width: Int
    let height: Int
    var pixels: [UInt8]
    /// Whether every alpha value is 255.
    var isOpaque = false
    /// Whether a 32-bit alpha channel was zero everywhere, so taken as none.
    var alphaChannelIsEmpty = false

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// A 32-bit alpha channel that is zero everywhere means "no alpha"
    /// (writers that leave the reserved byte zero): made opaque.
    mutating func resolveAlphaChannel() {
        var allZero = true
        var allOpaque = true
        for index in Swift.stride(from: 3, to: pixels.count, by: 4) {
            let alpha = pixels[index]
            if alpha != 0 { allZero = false }
            if alpha != 255 { allOpaque = false }
        }
        if allZero {
            for index in Swift.stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 }
        }
        alphaChannelIsEmpty = allZero
        isOpaque = allZero || allOpaque
    }

    /// The image: RGB when opaque, RGBA otherwise.
    func image(format: ImageFormat) throws(ImageDecodingError) -> Image {
        let image =
            isOpaque
            ? Image(width: width, height: height, pixelFormat: .rgb8, pixels: PNGDecoder.keepChannels(pixels, stride: 4, [0, 1, 2]))
            : Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
        guard let image else { throw ImageDecodingError(code: .corrupt, format: format, detail: "inconsistent sizes") }
        return image
    }
}
