import Foundation
import Imago

/// Encodes at a quality, then lower and lower, until the answer takes at
/// most `maximumBytes` (imgproxy's `max_bytes`): each step multiplies the
/// quality by 0.25, 0.5 or 0.75 as the answer is over 3, 1.5 or 1 times
/// too large, and stops at a quality of 10 or at a format without quality
/// (PNG), whose answer is then returned as large as it is.
struct FittingEncoder: ImageEncoding {
    let quality: Int
    let maximumBytes: Int
    let encoder: @Sendable (_ quality: Int) -> any ImageEncoding

    var format: ImageFormat { encoder(quality).format }

    func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        var quality = quality
        while true {
            let data = try encoder(quality).encode(image)
            guard data.count > maximumBytes, quality > 10, ImageFormat(sniffing: data) != .png else { return data }
            let over = Double(data.count) / Double(maximumBytes)
            quality = Int(Double(quality) * (over > 3 ? 0.25 : over > 1.5 ? 0.5 : 0.75))
        }
    }
}
