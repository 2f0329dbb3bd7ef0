import Foundation
import ImagoConcurrency

@testable import Imago
@testable import ImagoCaching

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

/// Decodes ``MockImage`` data, counts its decodes, records the order of the
/// images it decodes, and can hold decodes (on the pipeline's decode threads)
/// until released.
final class MockImageDecoder: ImageDecoding {
    private struct State {
        var count = 0
        var order: [UInt32] = []
        var isPaused = false
        var held: [DispatchSemaphore] = []
    }

    private let state = Locked(State())

    var decodeCount: Int { state.withLock { $0.count } }
    /// The identifiers of the mock images decoded (or being decoded), in the order decodes started.
    var decodeOrder: [UInt32] { state.withLock { $0.order } }

    /// Holds every decode that starts from now on until ``resume()``.
    func pause() { state.withLock { $0.isPaused = true } }

    /// Releases the held decodes.
    func resume() {
        let held = state.withLock { state in
            state.isPaused = false
            defer { state.held = [] }
            return state.held
        }
        for semaphore in held { semaphore.signal() }
    }

    func canDecode(_ format: ImageFormat) -> Bool { format == .unknown }

    func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let id = data.count == 8 ? data.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
        let hold = state.withLock { state -> DispatchSemaphore? in
            state.count += 1
            state.order.append(id)
            guard state.isPaused else { return nil }
            state.held.append(DispatchSemaphore(value: 0))
            return state.held.last
        }
        hold?.wait()
        guard data.count == 8, data.prefix(4) == Data("MOCK".utf8) else {
            throw ImageDecodingError(code: .corrupt, format: .unknown, detail: "not a mock image")
        }
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
        perHost: Int = 16,
        decodes: Int = 2
    ) -> ImagePipeline {
        ImagePipeline(
            configuration: Configuration(
                dataLoader: loader,
                imageCache: MemoryCache<ImageCacheKey, Image>(),
                dataCache: dataCache,
                decoders: [decoder],
                maximumConcurrentDownloads: downloads,
                maximumConcurrentDownloadsPerHost: perHost,
                maximumConcurrentDecodes: decodes
            ))
    }
}
