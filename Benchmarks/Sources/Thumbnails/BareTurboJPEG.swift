import CTurboJPEGDirect
import Foundation

/// TurboJPEG alone decoding at 1/8 scale, the ceiling of a thumbnail: one
/// handle and one output buffer for every decode, as libjpeg-turbo's own
/// tjbench measures it, and no resampling or encoding.
final class BareTurboJPEG {
    private let handle: tjhandle
    private var buffer: [UInt8] = []

    init?() {
        guard let handle = tjInitDecompress() else { return nil }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// Decodes `jpeg` to RGB at 1/8 of its size; returns the decoded size, or
    /// `nil` if TurboJPEG failed.
    func decodeEighth(_ jpeg: Data) -> (width: Int, height: Int)? {
        jpeg.withUnsafeBytes { bytes -> (width: Int, height: Int)? in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var width: Int32 = 0
            var height: Int32 = 0
            var subsampling: Int32 = 0
            var colorspace: Int32 = 0
            guard tjDecompressHeader3(handle, base, UInt(bytes.count), &width, &height, &subsampling, &colorspace) == 0 else { return nil }
            // TJSCALED(dimension, 1/8): rounded up.
            let scaledWidth = (Int(width) + 7) / 8
            let scaledHeight = (Int(height) + 7) / 8
            if buffer.count < scaledWidth * scaledHeight * 3 { buffer = [UInt8](repeating: 0, count: scaledWidth * scaledHeight * 3) }
            let status = buffer.withUnsafeMutableBufferPointer { output in
                tjDecompress2(handle, base, UInt(bytes.count), output.baseAddress, Int32(scaledWidth), 0, Int32(scaledHeight), TJPF_RGB.rawValue, 0)
            }
            return status == 0 ? (scaledWidth, scaledHeight) : nil
        }
    }
}
