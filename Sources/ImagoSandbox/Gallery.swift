import Foundation
import Imago

/// A deterministic gallery of generated JPEG, PNG and WebP images of mixed sizes,
/// for the demo, the tests and the benchmarks: same seed, same bytes.
public struct Gallery: Sendable {
    /// One image of the gallery.
    public struct Item: Sendable {
        /// The path the image is served under, e.g. `/gallery/0042.jpg`.
        public var path: String
        /// The encoded bytes.
        public var data: Data
        /// The width in pixels.
        public var width: Int
        /// The height in pixels.
        public var height: Int
        /// JPEG, PNG or WebP.
        public var format: ImageFormat
    }

    /// The images, in order.
    public let items: [Item]

    /// Generates `count` images: about two thirds JPEG, the rest PNG and
    /// WebP; mostly 160-800 px, one in ten large (1600-2400 px wide, always JPEG).
    public init(count: Int, seed: UInt64 = 2026) throws {
        var generator = SeededGenerator(seed: seed)
        var items: [Item] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            let isLarge = index % 10 == 7
            let format: ImageFormat = isLarge || index % 3 != 2 ? .jpeg : index % 2 == 0 ? .png : .webp
            let width = isLarge ? Int.random(in: 1600...2400, using: &generator) : Int.random(in: 160...800, using: &generator)
            let height = width * Int.random(in: 50...133, using: &generator) / 100
            guard let image = Self.picture(width: width, height: height, using: &generator) else { continue }
            let encoder: any ImageEncoding =
                switch format {
                case .png: PNGEncoder()
                case .webp: WebPEncoder(quality: 85)
                default: JPEGEncoder(quality: 85)
                }
            let data = try encoder.encode(image)
            let name = String(format: "%04d", index) + "." + format.fileExtension
            items.append(Item(path: "/gallery/" + name, data: data, width: width, height: height, format: format))
        }
        self.items = items
    }

    /// The total size of the encoded images.
    public var byteCount: Int { items.reduce(0) { $0 + $1.data.count } }

    private static func picture(width: Int, height: Int, using generator: inout SeededGenerator) -> Image? {
        func color() -> (UInt8, UInt8, UInt8) {
            (UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator))
        }
        var canvas = Canvas(width: width, height: height, background: (0, 0, 0))
        canvas.fillVerticalGradient(top: color(), bottom: color())
        for _ in 0..<Int.random(in: 2...6, using: &generator) {
            canvas.fillRect(
                x: Int.random(in: 0..<width, using: &generator), y: Int.random(in: 0..<height, using: &generator),
                width: Int.random(in: width / 10...width / 2, using: &generator),
                height: Int.random(in: height / 10...height / 2, using: &generator), color: color()
            )
        }
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            canvas.fillCircle(
                centerX: Int.random(in: 0..<width, using: &generator), centerY: Int.random(in: 0..<height, using: &generator),
                radius: Int.random(in: min(width, height) / 10...min(width, height) / 3, using: &generator), color: color()
            )
        }
        return canvas.image
    }
}

extension TestImageServer {
    /// Serves every image of `gallery` under its path, with its media
    /// type, a day's max-age and a strong ETag, as a CDN would.
    public func serve(_ gallery: Gallery) {
        for (index, item) in gallery.items.enumerated() {
            let headers: HTTPFields = [
                .contentType: item.format.mediaType,
                .cacheControl: "max-age=86400",
                .eTag: "\"\(index)-\(item.data.count)\"",
            ]
            setRoute(item.path, .init(headers: headers, body: item.data))
        }
    }
}
