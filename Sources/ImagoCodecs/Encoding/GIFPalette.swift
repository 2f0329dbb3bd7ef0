import CImageQuant

/// A GIF frame's colour table and the frame's pixels as indices into it.
///
/// Pixels come in as ``GIFPixels`` values: 0 is transparent, anything else
/// an opaque colour. A frame of at most 256 values (transparency counting as
/// one) keeps its colours exactly; a frame of more is quantised by
/// libimagequant, with Floyd–Steinberg dithering.
struct GIFPalette {
    /// The colours, RGB; fewer than 257.
    var colors: [(red: UInt8, green: UInt8, blue: UInt8)]
    /// One index per pixel, row by row.
    var indices: [UInt8]
    /// The index drawn as transparent, if any pixel is.
    var transparentIndex: Int?

    /// How libimagequant quantises: the dithering level (0...1) and its speed (1...10).
    struct Quantiser {
        var dithering: Float
        var speed: Int
    }

    /// The pixels' own colours, or `nil` past 256 of them (counting
    /// transparency as one). Stops at the 257th.
    static func exact(_ pixels: [UInt32]) -> GIFPalette? {
        var table = ColorTable()
        var indices = [UInt8](repeating: 0, count: pixels.count)
        var previous: UInt32?
        var previousIndex: UInt8 = 0
        for position in pixels.indices {
            let pixel = pixels[position]
            // Runs of one colour are common: no lookup for them.
            if pixel != previous {
                guard let index = table.index(of: pixel) else { return nil }
                previous = pixel
                previousIndex = index
            }
            indices[position] = previousIndex
        }
        var transparentIndex: Int?
        let colors = table.values.enumerated().map { index, pixel in
            if pixel == GIFPixels.transparent { transparentIndex = index }
            return GIFPixels.components(pixel)
        }
        return GIFPalette(colors: colors, indices: indices, transparentIndex: transparentIndex)
    }

    /// At most 256 colours chosen by libimagequant, the pixels remapped with
    /// the quantiser's dithering. Transparent pixels keep one index of their own.
    static func quantised(_ pixels: [UInt32], width: Int, height: Int, with quantiser: Quantiser) throws(ImageEncodingError) -> GIFPalette {
        let hasTransparency = pixels.contains(GIFPixels.transparent)
        // With transparency, one index is kept free in case libimagequant
        // gives no colour of its own to the transparent pixels.
        var (colors, indices, transparentIndex) = try quantising(
            pixels, width: width, height: height, maximum: hasTransparency ? 255 : 256, with: quantiser
        ) { (image, result) throws(ImageEncodingError) in
            try check(liq_set_dithering_level(result, min(1, max(0, quantiser.dithering))), "setting the dithering")
            var indices = [UInt8](repeating: 0, count: pixels.count)
            try indices.withUnsafeMutableBufferPointer { (output) throws(ImageEncodingError) in
                guard let base = output.baseAddress else { return }
                try check(liq_write_remapped_image(result, image, base, output.count), "remapping")
            }
            let entries = try Self.entries(of: result)
            let colors = entries.map { (red: $0.r, green: $0.g, blue: $0.b) }
            return (colors, indices, entries.firstIndex { $0.a < 128 })
        }
        guard hasTransparency else { return GIFPalette(colors: colors, indices: indices, transparentIndex: nil) }
        let transparent: Int
        if let transparentIndex {
            transparent = transparentIndex
        } else {
            guard colors.count < 256 else { throw ImageEncodingError(format: .gif, detail: "libimagequant left no index for transparency") }
            transparent = colors.count
            colors.append((0, 0, 0))
        }
        // Transparent pixels are transparent whatever dithering did near them.
        for position in pixels.indices where pixels[position] == GIFPixels.transparent {
            indices[position] = UInt8(transparent)
        }
        return GIFPalette(colors: colors, indices: indices, transparentIndex: transparent)
    }

    /// At most `maximum` opaque colours chosen by libimagequant for the
    /// pixels, which are not remapped: a palette for ``GIFColorMapper``.
    static func colors(
        of pixels: [UInt32], width: Int, height: Int, maximum: Int, with quantiser: Quantiser
    ) throws(ImageEncodingError) -> [(red: UInt8, green: UInt8, blue: UInt8)] {
        try quantising(pixels, width: width, height: height, maximum: maximum, with: quantiser) { (_, result) throws(ImageEncodingError) in
            try Self.entries(of: result).filter { $0.a >= 128 }.map { (red: $0.r, green: $0.g, blue: $0.b) }
        }
    }

    /// Calls `body` with libimagequant's image of the pixels and its
    /// quantisation to at most `maximum` colours.
    private static func quantising<Result>(
        _ pixels: [UInt32], width: Int, height: Int, maximum: Int, with quantiser: Quantiser,
        _ body: (_ image: OpaquePointer, _ result: OpaquePointer) throws(ImageEncodingError) -> Result
    ) throws(ImageEncodingError) -> Result {
        OpenMP.runRegionsSerially()
        guard let attributes = liq_attr_create() else { throw ImageEncodingError(format: .gif, detail: "libimagequant could not start") }
        defer { liq_attr_destroy(attributes) }
        try check(liq_set_max_colors(attributes, Int32(maximum)), "setting the colour count")
        try check(liq_set_speed(attributes, Int32(min(10, max(1, quantiser.speed)))), "setting the speed")
        // libimagequant reads the pixels until the remapping is written: all
        // of it happens while they are pinned. Their memory is RGBA bytes
        // (GIFPixels packs them so), what libimagequant takes.
        return try pixels.withUnsafeBufferPointer { (buffer) throws(ImageEncodingError) in
            guard let base = buffer.baseAddress, let image = liq_image_create_rgba(attributes, base, Int32(width), Int32(height), 0) else {
                throw ImageEncodingError(format: .gif, detail: "libimagequant refused a \(width)x\(height) image")
            }
            defer { liq_image_destroy(image) }
            var result: OpaquePointer?
            try check(liq_image_quantize(image, attributes, &result), "quantising")
            guard let result else { throw ImageEncodingError(format: .gif, detail: "libimagequant made no palette") }
            defer { liq_result_destroy(result) }
            return try body(image, result)
        }
    }

    /// The palette of a quantisation, at most 256 entries.
    private static func entries(of result: OpaquePointer) throws(ImageEncodingError) -> [liq_color] {
        guard let palette = liq_get_palette(result) else { throw ImageEncodingError(format: .gif, detail: "libimagequant made no palette") }
        let count = min(256, Int(palette.pointee.count))
        return withUnsafeBytes(of: palette.pointee.entries) { Array($0.bindMemory(to: liq_color.self).prefix(count)) }
    }

    private static func check(_ error: liq_error, _ step: String) throws(ImageEncodingError) {
        guard error != LIQ_OK else { return }
        let reason =
            switch error {
            case LIQ_QUALITY_TOO_LOW: "quality too low"
            case LIQ_VALUE_OUT_OF_RANGE: "value out of range"
            case LIQ_OUT_OF_MEMORY: "out of memory"
            case LIQ_ABORTED: "aborted"
            case LIQ_BUFFER_TOO_SMALL: "buffer too small"
            case LIQ_INVALID_POINTER: "invalid pointer"
            case LIQ_UNSUPPORTED: "unsupported"
            default: "error \(error.rawValue)"
            }
        throw ImageEncodingError(format: .gif, detail: "libimagequant failed \(step): \(reason)")
    }
}

/// A small hash table from pixel values to palette indices, in the order
/// they were first seen, that refuses a 257th value.
private struct ColorTable {
    /// Twice the most values it holds, so probes stay short.
    private static let slotCount = 512
    /// A value no pixel has (opaque pixels have alpha 255, transparent ones are 0).
    private static let empty: UInt32 = 1
    private var keys = [UInt32](repeating: empty, count: slotCount)
    private var slots = [UInt8](repeating: 0, count: slotCount)
    private(set) var values: [UInt32] = []

    /// The index of `pixel`, added if new; `nil` when 256 values are taken.
    mutating func index(of pixel: UInt32) -> UInt8? {
        var slot = Int((pixel &* 0x9E37_79B1) >> 23)
        while keys[slot] != Self.empty {
            if keys[slot] == pixel { return slots[slot] }
            slot = (slot + 1) & (Self.slotCount - 1)
        }
        guard values.count < 256 else { return nil }
        keys[slot] = pixel
        slots[slot] = UInt8(values.count)
        values.append(pixel)
        return slots[slot]
    }
}

/// Pixels as the GIF encoder compares and quantises them: one `UInt32` each,
/// 0 for transparent (alpha under 128: GIF has one bit of alpha), else
/// red, green, blue and alpha 255, in that order in memory.
enum GIFPixels {
    /// The value of every transparent pixel.
    static let transparent: UInt32 = 0

    /// An image's pixels, converted.
    static func of(_ image: Image) -> [UInt32] {
        let channels = image.pixelFormat.bytesPerPixel
        var output = [UInt32](repeating: 0, count: image.width * image.height)
        image.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<image.height {
                var source = y * image.bytesPerRow
                for x in 0..<image.width {
                    let value: UInt32
                    switch image.pixelFormat {
                    case .gray8:
                        value = opaque(pixels[source], pixels[source], pixels[source])
                    case .grayAlpha8:
                        value = pixels[source + 1] < 128 ? transparent : opaque(pixels[source], pixels[source], pixels[source])
                    case .rgb8:
                        value = opaque(pixels[source], pixels[source + 1], pixels[source + 2])
                    case .rgba8:
                        value = pixels[source + 3] < 128 ? transparent : opaque(pixels[source], pixels[source + 1], pixels[source + 2])
                    }
                    output[y * image.width + x] = value
                    source += channels
                }
            }
        }
        return output
    }

    /// An opaque pixel of these colours.
    static func opaque(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> UInt32 {
        (UInt32(littleEndian: UInt32(red) | UInt32(green) << 8 | UInt32(blue) << 16 | 0xFF00_0000))
    }

    /// A pixel's red, green and blue.
    static func components(_ pixel: UInt32) -> (red: UInt8, green: UInt8, blue: UInt8) {
        let value = UInt32(littleEndian: pixel)
        return (UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16))
    }
}
