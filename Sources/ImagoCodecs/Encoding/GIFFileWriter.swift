import CGif
import Foundation

/// giflib's record-level writer (GIF89a), into memory. Every giflib error
/// becomes an ``ImageEncodingError`` with giflib's message.
final class GIFFileWriter {
    /// Where giflib's output function appends.
    private final class Sink {
        var data = Data()
    }

    private let sink = Sink()
    /// Open until ``close()``; giflib frees it on closing.
    private var file: UnsafeMutablePointer<GifFileType>?
    /// The LZW code size of frames that use the global colour table.
    private var globalCodeSize = 2

    init() throws(ImageEncodingError) {
        var status: Int32 = 0
        let write: OutputFunc = { file, bytes, count in
            guard let file, let bytes, let user = file.pointee.UserData, count >= 0 else { return 0 }
            Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue().data.append(bytes, count: Int(count))
            return count
        }
        guard let file = EGifOpen(Unmanaged.passUnretained(sink).toOpaque(), write, &status) else {
            throw Self.error(status, "opening")
        }
        EGifSetGifVersion(file, true)
        self.file = file
    }

    deinit {
        guard let file else { return }
        var status: Int32 = 0
        EGifCloseFile(file, &status)
    }

    /// The logical screen, with `colors` as the global colour table.
    func putScreen(width: Int, height: Int, colors: [(red: UInt8, green: UInt8, blue: UInt8)]) throws(ImageEncodingError) {
        let file = try openFile()
        try Self.withColorMap(colors) { (map) throws(ImageEncodingError) in
            try check(EGifPutScreenDesc(file, Int32(width), Int32(height), 8, 0, map), "writing the screen descriptor")
        }
        globalCodeSize = Self.codeSize(colorCount: colors.count)
    }

    /// The NETSCAPE2.0 application extension: the animation is repeated
    /// `repetitions` times after it first plays, 0 meaning forever.
    func putLoopExtension(repetitions: Int) throws(ImageEncodingError) {
        let file = try openFile()
        let step = "writing the loop extension"
        try check(EGifPutExtensionLeader(file, APPLICATION_EXT_FUNC_CODE), step)
        try check(EGifPutExtensionBlock(file, 11, Array("NETSCAPE2.0".utf8)), step)
        try check(EGifPutExtensionBlock(file, 3, [1, UInt8(repetitions & 0xFF), UInt8(repetitions >> 8 & 0xFF)]), step)
        try check(EGifPutExtensionTrailer(file), step)
    }

    /// One frame: a graphic control extension (if `control` is given),
    /// the image descriptor with a local colour table unless `usesGlobalColors`,
    /// and the indices compressed by ``GIFLZWEncoder`` (giflib writes the
    /// code size byte with the descriptor, and then the blocks as they are).
    func putFrame(
        _ rect: GIFRect, palette: GIFPalette, usesGlobalColors: Bool, control: (delay: Int, disposal: Int32)?
    ) throws(ImageEncodingError) {
        let file = try openFile()
        if let control {
            var block = GraphicsControlBlock(
                DisposalMode: control.disposal, UserInputFlag: false, DelayTime: Int32(control.delay),
                TransparentColor: palette.transparentIndex.map { Int32($0) } ?? NO_TRANSPARENT_COLOR
            )
            var bytes = [UInt8](repeating: 0, count: 4)
            let length = EGifGCBToExtension(&block, &bytes)
            try check(EGifPutExtension(file, GRAPHICS_EXT_FUNC_CODE, Int32(length), bytes), "writing a graphic control extension")
        }
        let putDescriptor = { (map: UnsafeMutablePointer<ColorMapObject>?) throws(ImageEncodingError) in
            try self.check(
                EGifPutImageDesc(file, Int32(rect.x), Int32(rect.y), Int32(rect.width), Int32(rect.height), false, map),
                "writing an image descriptor")
        }
        if usesGlobalColors {
            try putDescriptor(nil)
        } else {
            try Self.withColorMap(palette.colors, putDescriptor)
        }
        let codeSize = usesGlobalColors ? globalCodeSize : Self.codeSize(colorCount: palette.colors.count)
        let blocks = palette.indices.withUnsafeBufferPointer { GIFLZWEncoder.encode($0, codeSize: codeSize) }
        // giflib writes each block as it is (its length byte first), then
        // the empty block that ends the data.
        try blocks.withUnsafeBufferPointer { (blocks) throws(ImageEncodingError) in
            guard let base = blocks.baseAddress else { return }
            var offset = 0
            while offset < blocks.count {
                try check(EGifPutCodeNext(file, base + offset), "writing a frame's image data")
                offset += Int(base[offset]) + 1
            }
        }
        try check(EGifPutCodeNext(file, nil), "writing a frame's image data")
    }

    /// The LZW code size of a frame whose colour table holds `colorCount`
    /// colours: the bits of the table's size (a power of two, see
    /// ``withColorMap(_:_:)``), 2 at least, as giflib writes it.
    private static func codeSize(colorCount: Int) -> Int {
        var bits = 1
        while 1 << bits < colorCount { bits += 1 }
        return max(2, bits)
    }

    /// Writes the trailer and returns the file's bytes. The writer is closed
    /// after, whatever happens.
    func close() throws(ImageEncodingError) -> Data {
        let file = try openFile()
        self.file = nil
        var status: Int32 = 0
        guard EGifCloseFile(file, &status) == GIF_OK else { throw Self.error(status, "closing the file") }
        return sink.data
    }

    private func openFile() throws(ImageEncodingError) -> UnsafeMutablePointer<GifFileType> {
        guard let file else { throw ImageEncodingError(format: .gif, detail: "the file is already closed") }
        return file
    }

    private func check(_ status: Int32, _ step: String) throws(ImageEncodingError) {
        guard status != GIF_OK else { return }
        throw Self.error(file?.pointee.Error ?? 0, step)
    }

    private static func error(_ code: Int32, _ step: String) -> ImageEncodingError {
        let message = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        return ImageEncodingError(format: .gif, detail: "\(step): \(message)")
    }

    /// Calls `body` with a giflib colour map of `colors`, padded with black
    /// to the power of two GIF's tables must have (2 at least).
    private static func withColorMap(
        _ colors: [(red: UInt8, green: UInt8, blue: UInt8)],
        _ body: (UnsafeMutablePointer<ColorMapObject>) throws(ImageEncodingError) -> Void
    ) throws(ImageEncodingError) {
        var size = 2
        while size < colors.count { size *= 2 }
        guard size <= 256 else { throw ImageEncodingError(format: .gif, detail: "\(colors.count) colours in one table") }
        var entries = colors.map { GifColorType(Red: $0.red, Green: $0.green, Blue: $0.blue) }
        entries += repeatElement(GifColorType(Red: 0, Green: 0, Blue: 0), count: size - entries.count)
        guard let map = GifMakeMapObject(Int32(size), entries) else {
            throw ImageEncodingError(format: .gif, detail: "giflib could not make a colour table of \(size)")
        }
        defer { GifFreeMapObject(map) }
        try body(map)
    }
}

/// A rectangle of the GIF screen that a frame covers.
struct GIFRect: Equatable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int

    /// The smallest rectangle holding both.
    func union(_ other: GIFRect?) -> GIFRect {
        guard let other else { return self }
        let minX = min(x, other.x)
        let minY = min(y, other.y)
        let maxX = max(x + width, other.x + other.width)
        let maxY = max(y + height, other.y + other.height)
        return GIFRect(x: minX, y: minY, width: maxX - minX, height: maxY - minY)
    }

    /// The bounding box of the positions of a `width` by `height` screen
    /// where `include` holds; `nil` if none does.
    static func bounding(width: Int, height: Int, where include: (Int) -> Bool) -> GIFRect? {
        var minX = width
        var minY = -1
        var maxX = -1
        var maxY = -1
        for y in 0..<height {
            let row = y * width
            guard let first = (0..<width).first(where: { include(row + $0) }) else { continue }
            // Only the part right of what is known needs looking at from the right.
            let last = (max(first, maxX + 1)..<width).last(where: { include(row + $0) }) ?? first
            if minY < 0 { minY = y }
            maxY = y
            minX = min(minX, first)
            maxX = max(maxX, last)
        }
        guard minY >= 0 else { return nil }
        return GIFRect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1)
    }
}
