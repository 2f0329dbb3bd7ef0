import AsyncHTTPClient
import CacheWorkloads
import Foundation
import Imago
import ImagoSandbox
import ImagoServer
import Logging
import ServiceLifecycle

// imago serve's thumbnail rate against the same transformation in a bare
// loop, in one run, and its result-cache hits.
//
// Sources: 16 photo-like 1024x768 JPEGs (q85) on a local origin
// (127.0.0.2, Cache-Control max-age=3600). Transform rate: requests for
// w:256/h:256/f:jpeg/q:N, a new q for every round so that every request
// is a transformation (the source comes from the disk cache after its
// first download), two in flight so that the server always has the next
// one; one transformation slot. Bare loop: JPEGDecoder at the DCT scale
// covering 256x256 (1/4: 256x192), resample (none needed), JPEGEncoder q80.
// Result-cache hits: the last round's URLs again, 16 in flight.
//
//     taskset -c 0 .build/release/ServeThroughput [rounds]
@main
enum ServeThroughput {
    static func main() async throws {
        let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 5 : 5
        // Synchronous throwing calls stay out of this async function: Swift
        // 6.3.1 crashed compiling them inline in release ("splitting coroutine").
        let photos = makePhotos()
        let origin = try await TestImageServer.start(host: "127.0.0.2")
        for (index, photo) in photos.enumerated() {
            origin.setRoute("/p\(index).jpg", .init(headers: [("Cache-Control", "max-age=3600")], body: photo))
        }
        let folder = TemporaryDirectory("imago-serve-bench")
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        guard let service = makeService(folder: folder.path, logger: logger) else { return }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = ImageServer.application(service: service, host: "127.0.0.1", port: 0, logger: logger) { portContinuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { return }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        print("ServeThroughput: 1024x768 JPEG sources, 256 px JPEG q80 thumbnails; load average \(loadAverage())")

        func url(_ photo: Int, quality: Int, width: Int = 256) -> String {
            let source = URLSigning.base64URL(Array(origin.url("/p\(photo).jpg").absoluteString.utf8))
            return "http://127.0.0.1:\(port)/unsafe/w:\(width)/h:256/f:jpeg/q:\(quality)/\(source)"
        }
        // Warm-up: every source downloaded once into the disk cache.
        _ = try await fetchAll((0..<16).map { url($0, quality: 80, width: 255) }, inFlight: 2, client: client)

        var served: [Double] = [], bare: [Double] = [], hits: [Double] = [], p99s: [Double] = []
        let perRound = 160
        for round in 0..<min(rounds, 9) {
            // A quality of its own for every batch of 16: every request is a new answer.
            let urls = (0..<perRound).map { url($0 % 16, quality: 100 - round * 10 - $0 / 16) }
            served.append(try await fetchAll(urls, inFlight: 2, client: client).rate)
            bare.append(bareLoop(photos, count: perRound))
            let repeated = try await fetchAll(Array(urls.prefix(160)) + Array(urls.prefix(160)) + Array(urls.prefix(160)), inFlight: 16, client: client)
            hits.append(repeated.rate)
            p99s.append(repeated.p99)
        }
        let servedRate = median(served), bareRate = median(bare)
        print(String(format: "  transformations through imago serve  %6.1f/s  (rounds: %@)", servedRate, format(served)))
        print(String(format: "  the same in a bare loop               %6.1f/s  (rounds: %@)", bareRate, format(bare)))
        print(String(format: "  share                                 %5.0f%%  (goal: at least 85%%)", 100 * servedRate / bareRate))
        print(String(format: "  result-cache hits, 16 in flight      %7.0f/s  p99 %.2f ms  (rounds: %@)", median(hits), median(p99s) * 1000, format(hits)))
        try await client.shutdown()
        await group.triggerGracefulShutdown()
        try await running.value
        service.close()
        try await origin.shutdown()
    }

    /// GETs every URL, `inFlight` at a time; the rate and the 99th percentile latency. Any status but 200 stops the run.
    static func fetchAll(_ urls: [String], inFlight: Int, client: HTTPClient) async throws -> (rate: Double, p99: Double) {
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: Double.self) { group in
            var latencies: [Double] = []
            for (index, url) in urls.enumerated() {
                if index >= inFlight, let latency = try await group.next() { latencies.append(latency) }
                group.addTask {
                    let begin = ContinuousClock.now
                    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
                    let body = try await response.body.collect(upTo: 16 << 20)
                    guard response.status == .ok, body.readableBytes > 0 else { throw BenchmarkFailure(status: Int(response.status.code), url: url) }
                    return seconds(ContinuousClock.now - begin)
                }
            }
            for try await latency in group { latencies.append(latency) }
            return latencies
        }
        let sorted = latencies.sorted()
        return (Double(urls.count) / seconds(ContinuousClock.now - start), sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }

    /// The transformation alone, on this thread: decode at the DCT scale,
    /// resample to fit 256x256, encode q80. NaN if a decode fails.
    static func bareLoop(_ photos: [Data], count: Int) -> Double {
        let options = ImageDecodingOptions(targetSize: ImageSize(width: 256, height: 256), contentMode: .fit)
        let encoder = JPEGEncoder(quality: 80)
        let start = ContinuousClock.now
        for index in 0..<count {
            guard let image = try? JPEGDecoder().decode(photos[index % photos.count], options: options),
                  (try? encoder.encode(options.scaled(image))) != nil
            else { return .nan }
        }
        return Double(count) / seconds(ContinuousClock.now - start)
    }

    /// 16 seeded photo-like 1024x768 JPEGs at quality 85.
    static func makePhotos() -> [Data] {
        (0..<16).compactMap { try? photoLikeJPEG(width: 1024, height: 768, seed: UInt64(200 + $0), discs: 60, detail: 72, quality: 85) }
    }

    /// The service under test: unsigned URLs, the origin's network opened, one transformation slot.
    static func makeService(folder: String, logger: Logger) -> ImageService? {
        try? ImageService(configuration: .init(
            allowsUnsigned: true, sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]), cacheFolder: folder,
            maximumConcurrentTransformations: 1
        ), logger: logger)
    }

    static func format(_ values: [Double]) -> String { values.map { String(format: "%.0f", $0) }.joined(separator: ", ") }

    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
    }
}

struct BenchmarkFailure: Error {
    var status: Int
    var url: String
}
