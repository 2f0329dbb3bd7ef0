import Benchmark
import Foundation
import Imago
import ImagoSandbox

/// Memory hits through the pipeline: the synchronous `cachedImage(for:)` and
/// the async `image(for:)`. One iteration is one lookup of one of 1,000
/// images held in memory, so the percentiles are per lookup.
func pipelineBenchmarks() {
    let perOperation = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 1_000,
        maxDuration: .seconds(5),
        maxIterations: 200_000
    )

    Benchmark("Pipeline cachedImage(for:) memory hit", configuration: perOperation) { (benchmark: Benchmark, state: MemoryHitState) in
        let request = state.requests[state.next % state.requests.count]
        state.next += 1
        let image = state.pipeline.cachedImage(for: request)
        if image == nil { benchmark.error("memory miss") }
        blackHole(image)
    } setup: {
        try await MemoryHitState.make()
    }

    Benchmark("Pipeline image(for:) memory hit", configuration: perOperation) { (benchmark: Benchmark, state: MemoryHitState) in
        let request = state.requests[state.next % state.requests.count]
        state.next += 1
        do {
            let response = try await state.pipeline.image(for: request)
            blackHole(response)
        } catch {
            benchmark.error("\(error)")
        }
    } setup: {
        try await MemoryHitState.make()
    }
}

/// A pipeline whose memory cache holds 1,000 small images, and their requests.
final class MemoryHitState: @unchecked Sendable {
    // @unchecked: used by one benchmark thread at a time.
    let pipeline: ImagePipeline
    let requests: [ImageRequest]
    var next = 0

    private init(pipeline: ImagePipeline, requests: [ImageRequest]) {
        self.pipeline = pipeline
        self.requests = requests
    }

    static func make() async throws -> MemoryHitState {
        let pipeline = ImagePipeline(configuration: .init(dataCache: nil))
        let requests = (0..<1000).map { ImageRequest(url: URL(string: "https://images.example/thumbnails/\($0).jpg")!) }
        let pixels = [UInt8](repeating: 128, count: 64 * 64 * 3)
        guard let image = Image(width: 64, height: 64, pixelFormat: .rgb8, pixels: pixels) else {
            throw CocoaError(.coderInvalidValue)
        }
        for request in requests { pipeline.cache[request] = image }
        return MemoryHitState(pipeline: pipeline, requests: requests)
    }
}
