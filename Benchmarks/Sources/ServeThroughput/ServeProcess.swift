import CacheWorkloads
import Foundation
import Imago
import ImagoSandbox
import ImagoServer
import Logging
import ServiceLifecycle

/// The process on core 0: the origin, the service behind its HTTP server,
/// and the bare loop. Prints `ready <port> <store µs> <16 sources>`, then
/// answers commands on standard input, one a line: `bare <seconds>` runs
/// the bare loop (`bare <rate> <count>`), `stop` (or the end of the input) stops
/// the server gracefully and closes the service (`closed in <seconds> s`).
enum ServeProcess {
    static func run(cacheParent: String, validators: Bool) async throws {
        let photos = makePhotos()
        let origin = try await TestImageServer.start(host: "127.0.0.2")
        for (index, photo) in photos.enumerated() {
            // With validators, as most origins send them (S3, nginx): the service need not hash the source.
            let validator: HTTPFields = validators ? [.eTag: "\"photo-\(index)\"", .lastModified: "Tue, 24 Nov 2026 08:00:00 GMT"] : [:]
            origin.setRoute("/p\(index).jpg", .init(headers: [.cacheControl: "max-age=3600"] + validator, body: photo))
        }
        let folder = cacheParent + "/imago-serve-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        guard let service = makeService(folder: folder, logger: logger) else {
            throw BenchmarkFailure(description: "the service did not open its cache folder under \(cacheParent)")
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = ServeApplication.application(service: service, host: "127.0.0.1", port: 0, logger: logger) { portContinuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { return }

        let sources = (0..<16).map { URLSigning.base64URL(Array(origin.url("/p\($0).jpg").absoluteString.utf8)) }
        // Every source into the disk cache once (a box no round asks for), over HTTP.
        let client = HTTPDataLoader()
        for source in sources {
            do {
                _ = try await client.loadData(
                    for: DataRequest(url: URL(string: "http://127.0.0.1:\(port)/unsafe/w:255/h:256/f:jpeg/q:80/\(source)")!)
                ) { _ in }
            } catch {
                throw BenchmarkFailure(description: "warm-up failed: \(error)")
            }
        }
        try await client.shutdown()
        let store = await onThread { storeCost(folder: folder + "-probe") }
        say("ready \(port) \(String(format: "%.0f", store * 1e6)) \(sources.joined(separator: " "))")

        let commands = AsyncStream<String> { continuation in
            Thread.detachNewThread {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
        }
        for await command in commands {
            let words = command.split(separator: " ")
            guard words.first == "bare", let seconds = Double(words.last ?? "") else { break }
            let (rate, count) = await onThread { bareLoop(photos, seconds: seconds) }
            say(String(format: "bare %.1f %d", rate, count))
        }
        await group.triggerGracefulShutdown()
        try await running.value
        let start = ContinuousClock.now
        service.close()
        let closing = CacheWorkloads.seconds(ContinuousClock.now - start)
        try await origin.shutdown()
        say(String(format: "closed in %.2f s", closing))
    }

    /// A line to the driver, at once (standard output is a pipe).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func onThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// The transformation alone, on this thread, for `seconds`: decode at
    /// the DCT scale, resample to fit 256x256, encode q80; the rate and the
    /// count. NaN if a decode fails.
    static func bareLoop(_ photos: [Data], seconds: Double) -> (Double, Int) {
        let options = ImageDecodingOptions(targetSize: ImageSize(width: 256, height: 256), contentMode: .fit)
        let encoder = JPEGEncoder(quality: 80)
        let start = ContinuousClock.now
        var count = 0
        while CacheWorkloads.seconds(ContinuousClock.now - start) < seconds {
            guard let image = try? JPEGDecoder().decode(photos[count % photos.count], options: options),
                (try? encoder.encode(options.scaled(image))) != nil
            else { return (.nan, 0) }
            count += 1
        }
        return (Double(count) / CacheWorkloads.seconds(ContinuousClock.now - start), count)
    }

    /// Seconds per `DiskCache.storeData` of 12 KB (a thumbnail's size) in a
    /// new cache at `folder`, removed afterwards: what a result file costs
    /// on this file system, next to the result cache.
    static func storeCost(folder: String) -> Double {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard let cache = try? DiskCache(path: folder) else { return .nan }
        defer { cache.close() }
        let body = Data(repeating: 7, count: 12_000)
        let start = ContinuousClock.now
        for index in 0..<200 { try? cache.storeData(body, metadata: Data(count: 150), forKey: "probe \(index)") }
        return CacheWorkloads.seconds(ContinuousClock.now - start) / 200
    }

    /// 16 seeded photo-like 1024x768 JPEGs at quality 85.
    static func makePhotos() -> [Data] {
        (0..<16).compactMap { try? photoLikeJPEG(width: 1024, height: 768, seed: UInt64(200 + $0), discs: 60, detail: 72, quality: 85) }
    }

    /// The service under test: unsigned URLs, the origin's network opened, one transformation slot,
    /// every source kept from its first fetch (the warm-up's).
    static func makeService(folder: String, logger: Logger) -> ImageService? {
        try? ImageService(
            configuration: .init(
                allowsUnsigned: true, sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]), cacheFolder: folder,
                sourceAdmission: .always, maximumConcurrentTransformations: 1
            ), logger: logger)
    }
}
