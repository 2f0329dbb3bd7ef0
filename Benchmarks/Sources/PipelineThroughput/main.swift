import AsyncHTTPClient
import CacheWorkloads
import Foundation
import Imago
import ImagoTestSupport
import NIOCore

// Throughput of the whole pipeline against its parts, measured in one run on
// one machine, so that the ratios mean something:
//
// 1. Cold loads of 2,000 distinct URLs of a ~20 KB JPEG from the in-process
//    loopback server: a bare AsyncHTTPClient loop (16 requests in flight,
//    bodies collected) against the pipeline (download, disk store, memory
//    store; once with decoding skipped by a pass-through decoder, once with
//    the JPEG decoded).
// 2. Disk hits: a new pipeline on the filled cache folder loading the same
//    2,000 images (read + decode) against reading the same JPEG files from a
//    plain folder and decoding them with TurboJPEG directly, on as many
//    threads as the pipeline decodes on.
//
// Prints the median of each over the rounds. Run in release:
//     swift run -c release PipelineThroughput [rounds]

let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 5 : 5
let count = 2_000
let concurrency = 16
let cores = ProcessInfo.processInfo.activeProcessorCount
let scratch = (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()) + "/imago-throughput-\(getpid())"

/// Returns an image for any data, without decoding: isolates the pipeline's own cost.
struct PassThroughDecoder: ImageDecoding {
    static let pixel = Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [0])!
    func canDecode(_ format: ImageFormat) -> Bool { true }
    func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image { Self.pixel }
}

/// Runs `load` for every index in 0..<count on `concurrency` workers and
/// returns the rate in loads per second.
func rate(of count: Int, _ load: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
    let next = Locked(0)
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                while true {
                    let index = next.take()
                    guard index < count else { return }
                    try await load(index)
                }
            }
        }
        try await group.waitForAll()
    }
    return Double(count) / seconds(ContinuousClock.now - start)
}

func bareLoop(_ client: HTTPClient, _ urls: [URL]) async throws -> Double {
    try await rate(of: urls.count) { index in
        let response = try await client.execute(HTTPClientRequest(url: urls[index].absoluteString), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok, body.readableBytes > 0 else { throw CocoaError(.fileReadCorruptFile) }
    }
}

/// Loads every URL through `pipeline`, as many in flight as the bare loop has.
func loadAll(_ pipeline: ImagePipeline, _ urls: [URL]) async throws -> Double {
    try await rate(of: urls.count) { index in _ = try await pipeline.image(for: urls[index]) }
}

func makePipeline(folder: String, loader: HTTPDataLoader, decoder: any ImageDecoding) throws -> (ImagePipeline, DiskCache) {
    try? FileManager.default.removeItem(atPath: folder)
    let disk = try DiskCache(path: folder, configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
    let pipeline = ImagePipeline(configuration: .init(
        dataLoader: loader, dataCache: disk, decoders: [decoder],
        maximumConcurrentDownloads: concurrency, maximumConcurrentDownloadsPerHost: concurrency
    ))
    return (pipeline, disk)
}

/// Reads every file and decodes it, on `cores` threads; with `keeping`, the
/// images are kept until the end, as a cache keeps them.
func directDecode(_ paths: [String], keeping: Bool) throws -> Double {
    let next = Locked(0)
    let failures = Locked(0)
    let kept = KeptImages()
    let start = ContinuousClock.now
    DispatchQueue.concurrentPerform(iterations: cores) { _ in
        while true {
            let index = next.take()
            guard index < paths.count else { return }
            if let data = FileManager.default.contents(atPath: paths[index]),
               let image = try? JPEGDecoder().decode(data, options: ImageDecodingOptions()) {
                if keeping { kept.append(image) }
                continue
            }
            _ = failures.take()
        }
    }
    let elapsed = ContinuousClock.now - start
    guard failures.take() == 0 else { throw CocoaError(.fileReadCorruptFile) }
    return Double(paths.count) / seconds(elapsed)
}

/// Decoded images kept alive, as a memory cache keeps them.
final class KeptImages: @unchecked Sendable {
    // @unchecked: `images` is only touched with `lock` held.
    private let lock = NSLock()
    private var images: [Image] = []
    func append(_ image: Image) { lock.lock(); defer { lock.unlock() }; images.append(image) }
}

/// A counter behind a lock.
final class Locked: @unchecked Sendable {
    // @unchecked: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value: Int
    init(_ value: Int) { self.value = value }
    func take() -> Int { lock.lock(); defer { lock.unlock() }; value += 1; return value - 1 }
}

let jpeg = try photoLikeJPEG()
let server = try await TestImageServer.start(threads: 1)
// Fresh for an hour, so that the disk-hit pass reads the disk only.
for index in 0..<count { server.setRoute("/img/\(index).jpg", .init(headers: [("Cache-Control", "max-age=3600")], body: jpeg)) }
var clientConfiguration = HTTPClient.Configuration()
clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
let loader = HTTPDataLoader(configuration: .init(maximumConnectionsPerHost: concurrency))
try FileManager.default.createDirectory(atPath: scratch + "/files", withIntermediateDirectories: true)
let paths = (0..<count).map { scratch + "/files/\($0).jpg" }
for path in paths { _ = FileManager.default.createFile(atPath: path, contents: jpeg) }

// PROFILE=cold or PROFILE=disk: repeat one variant, for a profiler.
if let profile = ProcessInfo.processInfo.environment["PROFILE"] {
    for round in 0..<rounds {
        let urls = (0..<count).map { server.url("/img/\($0).jpg?profile=\(round)") }
        let (pipeline, disk) = try makePipeline(folder: scratch + "/profile", loader: loader, decoder: PassThroughDecoder())
        let cold = try await loadAll(pipeline, urls)
        disk.close()
        guard profile == "disk" else { print(String(format: "cold %.0f/s", cold)); continue }
        let reopened = try DiskCache(path: scratch + "/profile", configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
        let fromDisk = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: nil, dataCache: reopened))
        print(String(format: "disk %.0f/s", try await loadAll(fromDisk, urls)))
        reopened.close()
    }
    exit(0)
}

print("PipelineThroughput: \(count) loads of a \(jpeg.count)-byte JPEG, \(rounds) rounds, \(cores) cores, \(concurrency) downloads in flight")
var bare: [Double] = [], skipped: [Double] = [], decoded: [Double] = [], diskHits: [Double] = [], direct: [Double] = []
var diskHitsUncached: [Double] = [], directKept: [Double] = [], noDisk: [Double] = []
for round in 0..<rounds {
    // Fresh URLs each round so that nothing is served from a previous round's caches.
    let urls = (0..<count).map { server.url("/img/\($0).jpg?round=\(round)") }
    bare.append(try await bareLoop(client, urls))

    let (skipping, skippingDisk) = try makePipeline(folder: scratch + "/skip", loader: loader, decoder: PassThroughDecoder())
    skipped.append(try await loadAll(skipping, urls))
    skippingDisk.close()

    let memoryOnly = ImagePipeline(configuration: .init(
        dataLoader: loader, dataCache: nil, decoders: [PassThroughDecoder()],
        maximumConcurrentDownloads: concurrency, maximumConcurrentDownloadsPerHost: concurrency
    ))
    noDisk.append(try await loadAll(memoryOnly, urls.map { URL(string: $0.absoluteString + "&memory")! }))

    let (decoding, decodingDisk) = try makePipeline(folder: scratch + "/decode", loader: loader, decoder: JPEGDecoder())
    decoded.append(try await loadAll(decoding, urls))
    decodingDisk.close()

    let reopened = try DiskCache(path: scratch + "/decode", configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
    let fromDisk = ImagePipeline(configuration: .init(dataLoader: loader, dataCache: reopened))
    diskHits.append(try await loadAll(fromDisk, urls))
    guard fromDisk.statistics.diskHits == count else {
        print("expected \(count) disk hits, got \(fromDisk.statistics)")
        exit(1)
    }
    reopened.close()

    let uncachedDisk = try DiskCache(path: scratch + "/decode", configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
    let uncached = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: nil, dataCache: uncachedDisk))
    diskHitsUncached.append(try await loadAll(uncached, urls))
    uncachedDisk.close()

    direct.append(try directDecode(paths, keeping: false))
    directKept.append(try directDecode(paths, keeping: true))
    print(String(format: "round %d: bare %.0f/s, pipeline (decode skipped) %.0f/s (no disk cache %.0f/s), pipeline (decoded) %.0f/s, disk hits %.0f/s (no memory cache %.0f/s), direct read+decode %.0f/s (keeping the images %.0f/s)",
                 round + 1, bare.last!, skipped.last!, noDisk.last!, decoded.last!, diskHits.last!, diskHitsUncached.last!, direct.last!, directKept.last!))
}
print(String(format: """
    median over %d rounds:
      cold, bare AsyncHTTPClient loop        %6.0f requests/s
      cold, pipeline, decode skipped         %6.0f requests/s  (%.0f%% of bare)
      cold, pipeline, no disk cache, no decode %4.0f requests/s  (%.0f%% of bare)
      cold, pipeline, JPEG decoded           %6.0f requests/s  (%.0f%% of bare)
      disk hits, pipeline (read + decode)    %6.0f images/s
      direct read + TurboJPEG decode         %6.0f images/s    (pipeline: %.0f%%)
      disk hits, pipeline, no memory cache   %6.0f images/s
      direct, images kept as a cache would   %6.0f images/s    (pipeline: %.0f%%)
    """, rounds, median(bare), median(skipped), 100 * median(skipped) / median(bare),
    median(noDisk), 100 * median(noDisk) / median(bare), median(decoded), 100 * median(decoded) / median(bare),
    median(diskHits), median(direct), 100 * median(diskHits) / median(direct),
    median(diskHitsUncached), median(directKept), 100 * median(diskHits) / median(directKept)))
try await client.shutdown().get()
try await loader.shutdown()
try await server.shutdown()
try? FileManager.default.removeItem(atPath: scratch)
