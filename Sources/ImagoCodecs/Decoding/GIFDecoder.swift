import CGif
import Foundation

/// Decodes GIF with giflib, still or animated. Frames are composited onto
/// the canvas as the format prescribes (transparency, disposal to
/// background or to the previous frame) and decoded one at a time, so an
/// animation never holds more than a canvas or two of pixels.
///
/// Output: ``Image/PixelFormat/rgba8`` at the logical screen size; the parts
/// of a frame outside the screen are clipped. A truncated animation keeps
/// the frames that arrived whole, as browsers show them; a truncated first
/// frame is an error.
public struct GIFDecoder: ImageDecoding {
    /// Creates a GIF decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .gif }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let scan = try Self.scan(data, options: options)
        let canvas = ImageSize(width: scan.width, height: scan.height)
        let frameCount = scan.durations.count
        return try ImageAnimation.firstFrame(
            of: data,
            format: .gif,
            loopCount: scan.loopCount,
            frameDurations: scan.durations,
            frameSize: options.outputSize(for: canvas),
            source: try GIFFrameSource(data, frameCount: frameCount),
            makeSource: { () throws(ImageDecodingError) in try GIFFrameSource(data, frameCount: frameCount) }
        )
    }

    /// What a pass over the records, skipping the pixel data, tells.
    private struct Scan {
        var width: Int
        var height: Int
        var loopCount: Int
        var durations: [Double]
    }

    /// How many times the animation plays, from the NETSCAPE2.0 extension's
    /// count: as in browsers, no extension plays once, 0 forever, and n
    /// repeats the animation n times after the first play (Chromium's
    /// `cc/paint/image_animation_count.h`: "plays n + 1 cycles").
    static func playCount(repetitions: Int?) -> Int {
        guard let repetitions else { return 1 }
        return repetitions == 0 ? 0 : repetitions + 1
    }

    private static func scan(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Scan {
        let reader = try GIFReader(data)
        let width = Int(reader.file.pointee.SWidth)
        let height = Int(reader.file.pointee.SHeight)
        try options.checkPixelCount(width: width, height: height, format: .gif)
        var durations: [Double] = []
        do throws(ImageDecodingError) {
            while let frame = try reader.nextFrame() {
                try options.checkPixelCount(width: frame.width, height: frame.height, format: .gif)
                try reader.skipPixels()
                durations.append(ImageAnimation.displayDuration(seconds: Double(frame.delay) / 100))
                guard durations.count <= options.maximumFrameCount else {
                    throw ImageDecodingError(code: .tooManyFrames(count: durations.count, limit: options.maximumFrameCount), format: .gif)
                }
            }
        } catch {
            // Keep the frames that arrived whole, unless the error is a limit.
            if durations.isEmpty || error.code != .corrupt { throw error }
        }
        guard !durations.isEmpty else { throw ImageDecodingError(code: .corrupt, format: .gif, detail: "no frames") }
        return Scan(width: width, height: height, loopCount: playCount(repetitions: reader.loopCount), durations: durations)
    }
}

/// One pass over a GIF's frames, composited onto an RGBA canvas.
final class GIFFrameSource: AnimationFrameSource {
    private let reader: GIFReader
    private let frameCount: Int
    private let width: Int
    private let height: Int
    private var canvas: [UInt8]
    private var decoded = 0
    /// What the previous frame asks to be done to its area before the next is drawn.
    private var pendingDisposal: (mode: Int32, frame: GIFReader.Frame, saved: [UInt8]?)?

    init(_ data: Data, frameCount: Int) throws(ImageDecodingError) {
        reader = try GIFReader(data)
        self.frameCount = frameCount
        width = Int(reader.file.pointee.SWidth)
        height = Int(reader.file.pointee.SHeight)
        canvas = [UInt8](repeating: 0, count: width * height * 4)
    }

    func nextFrame() throws(ImageDecodingError) -> Image? {
        guard decoded < frameCount else { return nil }
        dispose()
        guard let frame = try reader.nextFrame() else { return nil }
        let saved = frame.disposal == DISPOSE_PREVIOUS ? canvas : nil
        try draw(frame)
        pendingDisposal = (frame.disposal, frame, saved)
        decoded += 1
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: canvas)
    }

    private func dispose() {
        guard let (mode, frame, saved) = pendingDisposal else { return }
        pendingDisposal = nil
        if mode == DISPOSE_PREVIOUS, let saved {
            canvas = saved
        } else if mode == DISPOSE_BACKGROUND {
            // Browsers clear to transparent rather than to the background colour.
            let columns = clipped(frame.left, frame.width, width)
            for y in clipped(frame.top, frame.height, height) where !columns.isEmpty {
                let start = (y * width + columns.lowerBound) * 4
                canvas.replaceSubrange(start..<(start + columns.count * 4), with: repeatElement(0, count: columns.count * 4))
            }
        }
    }

    private func draw(_ frame: GIFReader.Frame) throws(ImageDecodingError) {
        // Each index's RGBA pixel as it lies in memory; 0 (a pixel no
        // opaque colour has) for the transparent index and those past the
        // table, which leave the canvas as it is.
        let palette = Self.palette(frame.colorMap)
        var pixels = [UInt32](repeating: 0, count: 256)
        for index in 0..<min(256, palette.count / 3) where index != frame.transparentIndex {
            let (red, green, blue) = (UInt32(palette[index * 3]), UInt32(palette[index * 3 + 1]), UInt32(palette[index * 3 + 2]))
            pixels[index] = UInt32(littleEndian: red | green << 8 | blue << 16 | 0xFF00_0000)
        }
        let indices = try reader.readPixels(count: frame.width * frame.height)
        let columns = clipped(frame.left, frame.width, width)
        for (stored, row) in GIFReader.rowOrder(height: frame.height, interlaced: frame.interlaced).enumerated() {
            let y = frame.top + row
            guard y >= 0, y < height, !columns.isEmpty else { continue }
            let (first, offset) = (y * width + columns.lowerBound, stored * frame.width + columns.lowerBound - frame.left)
            canvas.withUnsafeMutableBytes { canvas in
                indices.withUnsafeBufferPointer { indices in
                    pixels.withUnsafeBufferPointer { pixels in
                        for x in 0..<columns.count {
                            let pixel = pixels[Int(indices[offset + x])]
                            if pixel != 0 { canvas.storeBytes(of: pixel, toByteOffset: (first + x) * 4, as: UInt32.self) }
                        }
                    }
                }
            }
        }
    }

    /// The frame's colours as RGB triples. A file with neither a local nor
    /// a global colour table (the format allows it) gets a default one, as
    /// in browsers: index i is the grey level i.
    static func palette(_ colorMap: UnsafeMutablePointer<ColorMapObject>?) -> [UInt8] {
        guard let colorMap, let colors = colorMap.pointee.Colors else {
            return (0..<256).flatMap { [UInt8($0), UInt8($0), UInt8($0)] }
        }
        let colorCount = Int(max(0, colorMap.pointee.ColorCount))
        return (0..<colorCount).flatMap { [colors[$0].Red, colors[$0].Green, colors[$0].Blue] }
    }

    /// The part of `start..<start + length` inside `0..<limit`.
    private func clipped(_ start: Int, _ length: Int, _ limit: Int) -> Range<Int> {
        let lower = max(0, start)
        let upper = min(limit, start + length)
        return lower < upper ? lower..<upper : 0..<0
    }
}

/// giflib's record-by-record reader over bytes in memory.
package final class GIFReader {
    /// An image descriptor with the graphics control extension before it.
    struct Frame {
        var left: Int
        var top: Int
        var width: Int
        var height: Int
        var interlaced: Bool
        var colorMap: UnsafeMutablePointer<ColorMapObject>?
        var delay: Int
        var disposal: Int32
        var transparentIndex: Int
    }

    /// The input giflib's read callback takes bytes from.
    private final class Input {
        let bytes: PinnedBytes
        var offset = 0
        init(_ data: Data) { bytes = PinnedBytes(data) }
    }

    private let input: Input
    let file: UnsafeMutablePointer<GifFileType>
    /// The NETSCAPE2.0 loop count as stored (repetitions after the first
    /// play, 0 meaning forever), once its extension has been read.
    private(set) var loopCount: Int?

    init(_ data: Data) throws(ImageDecodingError) {
        input = Input(data)
        var status: Int32 = 0
        let read: InputFunc = { file, buffer, wanted in
            guard let file, let buffer, let user = file.pointee.UserData, wanted > 0 else { return 0 }
            let input = Unmanaged<Input>.fromOpaque(user).takeUnretainedValue()
            let count = min(Int(wanted), input.bytes.count - input.offset)
            guard count > 0 else { return 0 }
            buffer.update(from: (input.bytes.baseAddress + input.offset).assumingMemoryBound(to: UInt8.self), count: count)
            input.offset += count
            return Int32(count)
        }
        guard let file = DGifOpen(Unmanaged.passUnretained(input).toOpaque(), read, &status) else {
            throw Self.error(status)
        }
        self.file = file
    }

    deinit {
        var status: Int32 = 0
        DGifCloseFile(file, &status)
    }

    /// Reads records up to the next image descriptor; `nil` at the trailer.
    func nextFrame() throws(ImageDecodingError) -> Frame? {
        var control = GraphicsControlBlock(DisposalMode: 0, UserInputFlag: false, DelayTime: 0, TransparentColor: NO_TRANSPARENT_COLOR)
        while true {
            var type = UNDEFINED_RECORD_TYPE
            try check(DGifGetRecordType(file, &type))
            switch type {
            case IMAGE_DESC_RECORD_TYPE:
                try check(DGifGetImageDesc(file))
                let descriptor = file.pointee.Image
                return Frame(
                    left: Int(descriptor.Left), top: Int(descriptor.Top),
                    width: Int(descriptor.Width), height: Int(descriptor.Height),
                    interlaced: descriptor.Interlace,
                    colorMap: descriptor.ColorMap ?? file.pointee.SColorMap,
                    delay: Int(control.DelayTime), disposal: Int32(control.DisposalMode),
                    transparentIndex: Int(control.TransparentColor)
                )
            case EXTENSION_RECORD_TYPE:
                try readExtension(&control)
            case TERMINATE_RECORD_TYPE:
                return nil
            default:
                throw ImageDecodingError(code: .corrupt, format: .gif, detail: "unexpected record")
            }
        }
    }

    private func readExtension(_ control: inout GraphicsControlBlock) throws(ImageDecodingError) {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        try check(DGifGetExtension(file, &code, &block))
        var isLoopExtension = false
        var first = true
        while let current = block {
            let length = Int(current[0])
            if code == GRAPHICS_EXT_FUNC_CODE, first {
                _ = DGifExtensionToGCB(length, current + 1, &control)
            } else if code == APPLICATION_EXT_FUNC_CODE, first {
                isLoopExtension = length == 11 && (0..<11).map { current[1 + $0] } == Array("NETSCAPE2.0".utf8)
            } else if isLoopExtension, length >= 3, current[1] == 1 {
                loopCount = Int(current[2]) | Int(current[3]) << 8
            }
            first = false
            try check(DGifGetExtensionNext(file, &block))
        }
    }

    /// Skips the current frame's compressed pixels without decoding them.
    func skipPixels() throws(ImageDecodingError) {
        var codeSize: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        try check(DGifGetCode(file, &codeSize, &block))
        while block != nil { try check(DGifGetCodeNext(file, &block)) }
    }

    /// Decodes the current frame's `count` pixels (its width times its
    /// height), as colour indices in stored row order. giflib hands over
    /// the compressed sub-blocks; GIFLZWDecoder decompresses them.
    func readPixels(count: Int) throws(ImageDecodingError) -> [UInt8] {
        var codeSize: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        var data: [UInt8] = []
        try check(DGifGetCode(file, &codeSize, &block))
        while let current = block {
            data.append(contentsOf: UnsafeBufferPointer(start: current + 1, count: Int(current[0])))
            try check(DGifGetCodeNext(file, &block))
        }
        var indices = [UInt8](repeating: 0, count: count)
        do {
            try data.withUnsafeBufferPointer { (data) throws(GIFLZWDecoder.Failure) in
                try indices.withUnsafeMutableBufferPointer { (indices) throws(GIFLZWDecoder.Failure) in
                    try GIFLZWDecoder.decode(data, minimumCodeSize: Int(codeSize), into: indices)
                }
            }
        } catch {
            throw ImageDecodingError(code: .corrupt, format: .gif, detail: "image data: \(error)")
        }
        return indices
    }

    /// The canvas rows in the order a frame stores them: interlaced frames
    /// store every 8th row from 0, every 8th from 4, every 4th from 2, then
    /// every 2nd from 1.
    package static func rowOrder(height: Int, interlaced: Bool) -> [Int] {
        guard interlaced else { return Array(0..<height) }
        return [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: height, by: step)) }
    }

    private func check(_ status: Int32) throws(ImageDecodingError) {
        guard status == GIF_OK else { throw Self.error(file.pointee.Error) }
    }

    private static func error(_ code: Int32) -> ImageDecodingError {
        let message = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        return ImageDecodingError(code: .corrupt, format: .gif, detail: message)
    }
}
