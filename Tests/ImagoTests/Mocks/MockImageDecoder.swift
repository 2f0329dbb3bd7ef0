import Foundation

@testable import Imago

/// Mock images: "MOCK" and a 32-bit identifier, decoded to a 1x1 RGBA image
/// whose pixel bytes are the identifier, so a test can tell which image a
/// display shows. Anything else is corrupt.
enum MockImage {
    static func data(id: UInt32) -> Data {
        Data("MOCK".utf8) + withUnsafeBytes(of: id.littleEndian) { Data($0) }
    }

    static func id(from url: URL) -> UInt32 {
        UInt32(url.lastPathComponent.filter(\.isNumber).suffix(9)) ?? 0
    }

    static func id(of image: Image) -> UInt32 {
        image.pixels.prefix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func image(id: UInt32) -> Image? {
        Image(width: 1, height: 1, pixelFormat: .rgba8, pixels: withUnsafeBytes(of: id.littleEndian) { Array($0) })
    }
}

/// Decodes ``MockImage`` data and counts its decodes.
final class MockImageDecoder: ImageDecoding {
    private let decodes = Locked(0)

    var decodeCount: Int { decodes.withLock { $0 } }

    func canDecode(_ format: ImageFormat) -> Bool { format == .unknown }

    func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        decodes.withLock { $0 += 1 }
        guard data.count == 8, data.prefix(4) == Data("MOCK".utf8) else {
            throw ImageDecodingError(code: .corrupt, format: .unknown, detail: "not a mock image")
        }
        let id = data.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard let image = MockImage.image(id: id) else {
            throw ImageDecodingError(code: .corrupt, format: .unknown)
        }
        return image
    }
}

extension ImagePipeline {
    /// A pipeline on the mock loader and decoder, with an optional disk cache.
    static func mock(
        loader: MockDataLoader,
        decoder: MockImageDecoder = MockImageDecoder(),
        dataCache: (any DataCaching)? = nil,
        downloads: Int = 16,
        perHost: Int = 16
    ) -> ImagePipeline {
        ImagePipeline(configuration: Configuration(
            dataLoader: loader,
            imageCache: MemoryCache<String, Image>(),
            dataCache: dataCache,
            decoders: [decoder],
            maximumConcurrentDownloads: downloads,
            maximumConcurrentDownloadsPerHost: perHost
        ))
    }
}
