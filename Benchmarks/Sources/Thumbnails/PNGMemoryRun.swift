import CacheWorkloads
import Foundation
import Imago

/// Loads `count` distinct 9000x9000 PNGs through a pipeline as thumbnails
/// fitting 256x256, `inFlight` at a time, and prints the peak resident set
/// above the baseline taken just before loading: what streaming the PNG
/// rows into the resampler saves (a whole decode would hold 243 MB of RGB
/// pixels per image in flight).
///
/// One seeded picture is encoded once; each request's load closure returns
/// it with a tEXt chunk naming the request inserted after IHDR, so that every
/// request has its own key and bytes and does the whole decode.
struct PNGMemoryRun {
    let count: Int
    let inFlight: Int
    /// Decode whole and resize afterwards (a resize processor, no target
    /// size): what every PNG thumbnail cost before its rows were streamed.
    let whole: Bool
    static let side = 9_000

    func run() async throws {
        guard let (png, baseline) = try prepare() else { return }
        let pipeline = ImagePipeline(configuration: .init(imageCache: MemoryCache<ImageCacheKey, Image>()))
        let expected = Thumbnail.options.outputSize(for: ImageSize(width: Self.side, height: Self.side))
        let loading = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                if index >= inFlight { try await group.next() }
                group.addTask {
                    let request =
                        whole
                        ? ImageRequest(key: "png-\(index)", processors: [.resize(to: Thumbnail.box, contentMode: .fit)]) {
                            Self.distinct(png, index: index)
                        }
                        : ImageRequest(key: "png-\(index)", targetSize: Thumbnail.box, contentMode: .fit) { Self.distinct(png, index: index) }
                    let response = try await pipeline.image(for: request)
                    guard response.image.size == expected else { throw CocoaError(.coderInvalidValue) }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = seconds(ContinuousClock.now - loading)
        let peak = ProcessStatus.megabytes("VmHWM") ?? .nan
        print(String(format: "loaded %d thumbnails in %.1f s (%.2f/s)", count, elapsed, Double(count) / elapsed))
        print(String(format: "peak resident %.0f MB: %.1f MB above the baseline (goal: under 60)", peak, peak - baseline))
    }

    /// Makes the picture and resets the peak resident set once it is made;
    /// nil where the peak cannot be reset. Synchronous: see ThumbnailBenchmark.
    private func prepare() throws -> (png: Data, baseline: Double)? {
        print(
            "Thumbnails --memory --png\(whole ? " --whole" : ""): \(count) distinct \(Self.side)x\(Self.side) PNGs through an ImagePipeline"
                + " as thumbnails fitting \(Thumbnail.box)\(whole ? " (decoded whole, then resized)" : " (rows streamed)"),"
                + " \(inFlight) requests in flight, default memory cache, no disk cache")
        let start = ContinuousClock.now
        let png = try PNGEncoder().encode(photoLikeImage(width: Self.side, height: Self.side, seed: 9, discs: 60))
        print(String(format: "one seeded picture, %.1f MB as PNG, made in %.1f s", Double(png.count) / 1e6, seconds(ContinuousClock.now - start)))
        guard ProcessStatus.resetPeak(), let baseline = ProcessStatus.megabytes("VmRSS") else {
            print("cannot reset the peak resident set (/proc/self/clear_refs): no figure")
            return nil
        }
        print(String(format: "baseline (resident before loading, peak reset to it): %.0f MB", baseline))
        return (png, baseline)
    }

    /// `png` with a tEXt chunk carrying `index` after its IHDR chunk.
    static func distinct(_ png: Data, index: Int) -> Data {
        let body = Data("tEXtComment\0imago png memory benchmark \(index)".utf8)
        var chunk = Data()
        withUnsafeBytes(of: UInt32(body.count - 4).bigEndian) { chunk.append(contentsOf: $0) }
        chunk.append(body)
        withUnsafeBytes(of: crc32(body).bigEndian) { chunk.append(contentsOf: $0) }
        let afterHeader = 8 + 25  // signature, IHDR (length, type, 13 bytes, CRC)
        return png.prefix(afterHeader) + chunk + png.dropFirst(afterHeader)
    }

    private static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
