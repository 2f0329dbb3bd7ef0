import CacheWorkloads
import Foundation
import Imago

/// The thumbnail every figure is about: fit inside 256x256, JPEG quality 80.
enum Thumbnail {
    static let box = ImageSize(width: 256, height: 256)
    static let options = ImageDecodingOptions(targetSize: box, contentMode: .fit)
    static let encoder = JPEGEncoder(quality: 80)

    /// The whole thumbnail: decode at the smallest n/8 scale that covers the
    /// box, resample to the exact size, encode.
    static func make(from jpeg: Data) throws -> Data {
        try encoder.encode(options.scaled(JPEGDecoder().decode(jpeg, options: options)))
    }
}

/// Seeded photo-like JPEGs of one size, each a different picture.
struct PhotoSet: Sendable {
    /// The default texture (see `photoLikeImage`): flat shapes alone would
    /// compress about 20 times smaller than a photo and decode far faster.
    /// At 72 a 4000x3000 photo is about 3.8 MB (2.5 bits a pixel), and bare
    /// TurboJPEG decodes it at 1/8 about as fast as the photos the goals
    /// were set against, so the figures compare.
    static let defaultDetail = 72

    let width: Int
    let height: Int
    let detail: Int
    let jpegs: [Data]

    /// `count` JPEGs of `width`x`height` at quality 85 from seeds `firstSeed`,
    /// `firstSeed + 1`, ...
    init(width: Int, height: Int, count: Int, firstSeed: UInt64 = 1, detail: Int = defaultDetail) throws {
        self.width = width
        self.height = height
        self.detail = detail
        jpegs = try (0..<UInt64(count)).map { index in
            try photoLikeJPEG(width: width, height: height, seed: firstSeed + index, discs: 60, detail: detail, quality: 85)
        }
    }

    var name: String { "\(width)x\(height)" }

    var meanMegabytes: Double { Double(jpegs.reduce(0) { $0 + $1.count }) / Double(max(1, jpegs.count)) / 1_000_000 }
}
