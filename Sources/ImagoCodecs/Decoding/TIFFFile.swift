import CTiff
import Foundation

/// A libtiff handle reading bytes in memory: no file, no copy (libtiff
/// takes the bytes as a mapped file), and no output. libtiff's messages go
/// to this handle's own handlers, which keep the first error for the
/// thrown ``ImageDecodingError``; its process-wide handlers, which print
/// to stderr, are turned off before the first handle opens.
final class TIFFFile {
    let handle: OpaquePointer
    private let input: Input

    /// The bytes libtiff reads, and what it said about them.
    private final class Input {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        /// libtiff's first error message since the last step began; later
        /// ones are usually its consequences.
        var firstError: String?

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    }

    /// libtiff's global handlers would print whatever a handle's own
    /// handlers do not take, such as messages from before the handle exists.
    /// Nothing else in the process uses libtiff, so they are turned off once.
    private static let silenced: Void = {
        TIFFSetErrorHandler(nil)
        TIFFSetWarningHandler(nil)
    }()

    /// Opens `bytes`, which must outlive the handle, and reads its first
    /// directory. `maximumAllocation` bounds each of libtiff's own
    /// allocations (tag arrays, strip buffers).
    init(_ bytes: UnsafeRawBufferPointer, maximumAllocation: Int) throws(ImageDecodingError) {
        _ = Self.silenced
        input = Input(bytes)
        guard let options = TIFFOpenOptionsAlloc() else {
            throw ImageDecodingError(code: .corrupt, format: .tiff, detail: "libtiff could not start")
        }
        defer { TIFFOpenOptionsFree(options) }
        let context = Unmanaged.passUnretained(input).toOpaque()
        TIFFOpenOptionsSetMaxSingleMemAlloc(options, tmsize_t(maximumAllocation))
        TIFFOpenOptionsSetErrorHandlerExtR(
            options,
            { _, context, module, format, arguments in
                guard let context, let arguments else { return 1 }
                let input = Unmanaged<Input>.fromOpaque(context).takeUnretainedValue()
                if input.firstError == nil { input.firstError = TIFFFile.message(module, format, arguments) }
                return 1
            }, context)
        // Warnings (unknown tags, odd but readable values) are dropped.
        TIFFOpenOptionsSetWarningHandlerExtR(options, { _, _, _, _, _ in 1 }, nil)
        // "r": read only, and libtiff maps the "file" (calls `map` below)
        // rather than copying strips out of it.
        let opened = TIFFClientOpenExt(
            "memory", "r", context,
            { context, buffer, size in
                guard let context, let buffer, size >= 0 else { return -1 }
                let input = Unmanaged<Input>.fromOpaque(context).takeUnretainedValue()
                let count = min(Int(size), max(0, input.bytes.count - input.offset))
                guard count > 0, let base = input.bytes.baseAddress else { return 0 }
                buffer.copyMemory(from: base + input.offset, byteCount: count)
                input.offset += count
                return tmsize_t(count)
            },
            { _, _, _ in -1 },
            { context, offset, whence in
                guard let context else { return toff_t.max }
                let input = Unmanaged<Input>.fromOpaque(context).takeUnretainedValue()
                let base: Int
                switch whence {
                case SEEK_SET: base = 0
                case SEEK_CUR: base = input.offset
                case SEEK_END: base = input.bytes.count
                default: return toff_t.max
                }
                // Offsets are unsigned: a "negative" one wraps, and is refused as too large.
                guard offset <= toff_t(Int.max - base) else { return toff_t.max }
                input.offset = base + Int(offset)
                return toff_t(input.offset)
            },
            { _ in 0 },
            { context in
                guard let context else { return 0 }
                return toff_t(Unmanaged<Input>.fromOpaque(context).takeUnretainedValue().bytes.count)
            },
            { context, base, size in
                guard let context, let base, let size else { return 0 }
                let input = Unmanaged<Input>.fromOpaque(context).takeUnretainedValue()
                guard let start = input.bytes.baseAddress else { return 0 }
                // libtiff only reads a file opened read-only through the mapping.
                base.pointee = UnsafeMutableRawPointer(mutating: start)
                size.pointee = toff_t(input.bytes.count)
                return 1
            },
            { _, _, _ in },
            options
        )
        guard let opened else { throw Self.error(input.firstError ?? "not a readable TIFF") }
        handle = opened
    }

    deinit { TIFFClose(handle) }

    /// The bytes one strip or tile of the current directory decodes to
    /// (libtiff allocates that much to read it); 0 if libtiff cannot tell.
    var chunkSize: UInt64 { TIFFIsTiled(handle) != 0 ? TIFFTileSize64(handle) : TIFFStripSize64(handle) }

    /// The first strip or tile of the current directory that lies past the
    /// end of the data, if one does: checked before the pixels are
    /// allocated, so that a short file declaring a large image is refused
    /// at once (compressed strips may still hold less than they should).
    func firstStripPastEnd() -> Int? {
        let count = TIFFIsTiled(handle) != 0 ? TIFFNumberOfTiles(handle) : TIFFNumberOfStrips(handle)
        let size = UInt64(input.bytes.count)
        for strip in 0..<count {
            var failed: Int32 = 0
            let offset = TIFFGetStrileOffsetWithErr(handle, strip, &failed)
            let length = TIFFGetStrileByteCountWithErr(handle, strip, &failed)
            // Strips the directory does not list are libtiff's to report.
            guard failed == 0 else { return nil }
            if length > 0, offset > size || length > size - offset { return Int(strip) }
        }
        return nil
    }

    /// Forgets libtiff's messages so far: what it reports about one step
    /// (some errors it recovers from) is not taken for a later step's.
    func beginStep() { input.firstError = nil }

    /// The error for a failed libtiff call: libtiff's own first message
    /// since ``beginStep()`` if it gave one, else `fallback`.
    func error(_ fallback: String) -> ImageDecodingError {
        Self.error(input.firstError ?? fallback)
    }

    private static func error(_ detail: String) -> ImageDecodingError {
        ImageDecodingError(code: .corrupt, format: .tiff, detail: detail)
    }

    /// A libtiff message: its printf format filled in, after the module
    /// (the function that reported it) if there is one.
    private static func message(_ module: UnsafePointer<CChar>?, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer) -> String {
        guard let format else { return "libtiff error" }
        var buffer = [CChar](repeating: 0, count: 512)
        _ = buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, arguments) }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let module else { return text }
        return "\(String(cString: module)): \(text)"
    }

    // MARK: - Fields

    /// A field of one `UInt16`, if the directory has it (or, `defaulted`, libtiff has a default for it).
    func uint16(_ tag: Int32, defaulted: Bool = false) -> UInt16? {
        var value: UInt16 = 0
        let found = withUnsafeMutablePointer(to: &value) { pointer in
            withVaList([pointer]) { arguments in
                defaulted ? TIFFVGetFieldDefaulted(handle, UInt32(tag), arguments) : TIFFVGetField(handle, UInt32(tag), arguments)
            }
        }
        return found == 1 ? value : nil
    }

    /// A field of one `UInt32`, if the directory has it.
    func uint32(_ tag: Int32) -> UInt32? {
        var value: UInt32 = 0
        let found = withUnsafeMutablePointer(to: &value) { pointer in
            withVaList([pointer]) { TIFFVGetField(handle, UInt32(tag), $0) }
        }
        return found == 1 ? value : nil
    }

    /// The directory's ICC profile, if it has one.
    var iccProfile: Data? {
        var count: UInt32 = 0
        var bytes: UnsafeMutableRawPointer?
        let found = withUnsafeMutablePointer(to: &count) { countPointer in
            withUnsafeMutablePointer(to: &bytes) { bytesPointer in
                withVaList([countPointer, bytesPointer]) { TIFFVGetField(handle, UInt32(TIFFTAG_ICCPROFILE), $0) }
            }
        }
        guard found == 1, let bytes, count > 0 else { return nil }
        return Data(bytes: bytes, count: Int(count))
    }

    /// The ExtraSamples field: what each sample after the colour ones is.
    var extraSamples: [UInt16] {
        var count: UInt16 = 0
        var values: UnsafeMutablePointer<UInt16>?
        let found = withUnsafeMutablePointer(to: &count) { countPointer in
            withUnsafeMutablePointer(to: &values) { valuesPointer in
                withVaList([countPointer, valuesPointer]) { TIFFVGetFieldDefaulted(handle, UInt32(TIFFTAG_EXTRASAMPLES), $0) }
            }
        }
        guard found == 1, let values else { return [] }
        return Array(UnsafeBufferPointer(start: values, count: Int(count)))
    }

    /// Sets the ExtraSamples field of the directory in memory (never the file).
    func setExtraSamples(_ samples: [UInt16]) -> Bool {
        var samples = samples
        return samples.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            return withVaList([Int32(buffer.count), base]) { TIFFVSetField(handle, UInt32(TIFFTAG_EXTRASAMPLES), $0) } == 1
        }
    }
}
