import CGif
import Foundation

extension FormatFixtures {
    /// Every frame's colour indices as giflib decodes them (DGifSlurp), in
    /// stored row order: a reader of GIF's LZW other than ``GIFDecoder``'s
    /// own, for checking what the encoder writes.
    public static func giflibIndices(_ data: Data) throws -> [[UInt8]] {
        final class Input {
            let bytes: [UInt8]
            var offset = 0
            init(_ bytes: [UInt8]) { self.bytes = bytes }
        }
        let input = Input(Array(data))
        let read: InputFunc = { file, buffer, wanted in
            guard let file, let buffer, let user = file.pointee.UserData else { return 0 }
            let input = Unmanaged<Input>.fromOpaque(user).takeUnretainedValue()
            let count = min(Int(wanted), input.bytes.count - input.offset)
            for index in 0..<max(0, count) { buffer[index] = input.bytes[input.offset + index] }
            input.offset += max(0, count)
            return Int32(max(0, count))
        }
        var status: Int32 = 0
        return try withExtendedLifetime(input) {
            guard let file = DGifOpen(Unmanaged.passUnretained(input).toOpaque(), read, &status) else {
                throw Failure(description: "DGifOpen failed: \(status)")
            }
            defer { DGifCloseFile(file, &status) }
            guard DGifSlurp(file) == GIF_OK else { throw Failure(description: "DGifSlurp failed: \(file.pointee.Error)") }
            return (0..<Int(file.pointee.ImageCount)).map { index in
                let image = file.pointee.SavedImages[index]
                let count = Int(image.ImageDesc.Width) * Int(image.ImageDesc.Height)
                return Array(UnsafeBufferPointer(start: image.RasterBits, count: count))
            }
        }
    }
}
