import CacheWorkloads
import Foundation
import Imago

/// Loads `count` distinct 4000x3000 JPEGs through a pipeline as thumbnails,
/// `inFlight` requests at a time, as a scrolling grid would, and prints the
/// peak resident set before and after.
///
/// Encoding 1,000 photos of 4000x3000 would take minutes, so `baseCount`
/// seeded photos are encoded once, and each request's load closure returns
/// one of them with a comment segment (COM) naming the request inserted after
/// the start marker: every request has its own key and its own bytes, and its
/// decode does the same work as a photo of its own would, but the pictures
/// repeat every `baseCount` requests. The bytes are made inside the closure,
/// so that only the bytes being decoded are alive, as when they come from the network.
struct MemoryRun {
    let count: Int
    let inFlight: Int
    let baseCount: Int

    func run() async throws {
        let photos = try prepare()
        let cache = MemoryCache<ImageCacheKey, Image>()
        let pipeline = ImagePipeline(configuration: .init(imageCache: cache))
        let start = ContinuousClock.now
        try await loadAll(photos, through: pipeline)
        report(elapsed: seconds(ContinuousClock.now - start), cache: cache)
    }

    /// Makes the photos and resets the peak resident set once they are made.
    private func prepare() throws -> PhotoSet {
        print(
            "Thumbnails --memory: \(count) distinct 4000x3000 JPEGs through an ImagePipeline as thumbnails fitting \(Thumbnail.box),"
                + " \(inFlight) requests in flight, default memory cache, no disk cache")
        print("load average at start: \(ProcessStatus.loadAverage)")
        let start = ContinuousClock.now
        let photos = try PhotoSet(width: 4000, height: 3000, count: baseCount, firstSeed: 1000)
        print(
            String(
                format: "distinct bytes: %d seeded photos (q85, mean %.2f MB) encoded in %.1f s; request i loads photo i mod %d"
                    + " with a COM segment naming i inserted, made in its load closure", baseCount, photos.meanMegabytes,
                seconds(ContinuousClock.now - start), baseCount))
        print("before loading (after making the photos): \(ProcessStatus.memory)")
        let reset = ProcessStatus.resetPeak()
        print(
            "before loading, peak reset to the current RSS: \(reset ? ProcessStatus.memory : "reset not supported, the peak below includes making the photos")"
        )
        return photos
    }

    /// Loads every request, `inFlight` at a time: a new one starts as one ends.
    private func loadAll(_ photos: PhotoSet, through pipeline: ImagePipeline) async throws {
        let expected = Thumbnail.options.outputSize(for: ImageSize(width: 4000, height: 3000))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                if index >= inFlight { try await group.next() }
                let base = photos.jpegs[index % photos.jpegs.count]
                group.addTask { try await Self.load(index, base: base, through: pipeline, expecting: expected) }
            }
            try await group.waitForAll()
        }
    }

    private func report(elapsed: Double, cache: MemoryCache<ImageCacheKey, Image>) {
        print(
            String(
                format: "loaded %d thumbnails in %.1f s (%.1f/s on %d cores)", count, elapsed, Double(count) / elapsed,
                ProcessInfo.processInfo.activeProcessorCount))
        print(
            String(
                format: "memory cache: %d images, %.0f MB of pixels (cost limit %.0f MB)", cache.totalCount,
                Double(cache.totalCost) / 1_048_576, Double(cache.configuration.costLimit) / 1_048_576))
        print("after loading: \(ProcessStatus.memory)")
        print("load average at end: \(ProcessStatus.loadAverage)")
    }

    /// Loads request `index` as a thumbnail, its bytes made from `base`.
    static func load(_ index: Int, base: Data, through pipeline: ImagePipeline, expecting size: ImageSize) async throws {
        let request = ImageRequest(key: "photo-\(index)", targetSize: Thumbnail.box, contentMode: .fit) {
            distinct(base, index: index)
        }
        let response = try await pipeline.image(for: request)
        guard response.image.size == size else { throw CocoaError(.coderInvalidValue) }
    }

    /// `jpeg` with a COM segment carrying `index` after its SOI marker.
    static func distinct(_ jpeg: Data, index: Int) -> Data {
        let text = Data("imago memory benchmark \(index)".utf8)
        let length = text.count + 2
        var data = Data(capacity: jpeg.count + length + 2)
        data.append(jpeg.prefix(2))
        data.append(contentsOf: [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)])
        data.append(text)
        data.append(jpeg.dropFirst(2))
        return data
    }
}
