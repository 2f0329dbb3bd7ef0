import AsyncHTTPClient
import CacheWorkloads
import Foundation
import Imago

// The workloads the benchmark times, and its helpers.

let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 5 : 5
let count = 2_000
/// Loads in flight in every variant (CONCURRENCY overrides it).
let concurrency = Int(ProcessInfo.processInfo.environment["CONCURRENCY"] ?? "") ?? 16
let cores = ProcessInfo.processInfo.activeProcessorCount
let scratch = (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()) + "/imago-throughput-\(getpid())"

/// Returns an image for any data, without decoding: isolates the pipeline's own cost.
struct PassThroughDecoder: ImageDecoding {
    static let pixel = Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [0])!
    func canDecode(_ format: ImageFormat) -> Bool { true }
    func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image { Self.pixel }
}

/// Answers every request at once with the same body: isolates the pipeline from HTTP.
struct InstantLoader: DataLoading {
    var data: Data
    func loadData(for request: DataRequest, progress: @escaping @Sendable (DownloadProgress) -> Void) async throws(DataLoadingError)
        -> DataLoadingResponse
    {
        progress(DownloadProgress(completed: Int64(data.count), expected: Int64(data.count)))
        return DataLoadingResponse(data: data, statusCode: 200, headers: [.cacheControl: "max-age=3600"], url: request.url)
    }
}

/// Runs `load` for every index in 0..<count on `concurrency` workers and
/// returns the rate in loads per second.
func timedLoop(of count: Int, _ load: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
    let next = Locked(0)
    let cpuStart = cpuSeconds()
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
    let elapsed = seconds(ContinuousClock.now - start)
    if ProcessInfo.processInfo.environment["CPU"] != nil {
        print(
            String(
                format: "  %.0f/s, %.0f CPU-µs per load, %.0f%% of the cores busy", Double(count) / elapsed,
                (cpuSeconds() - cpuStart) * 1e6 / Double(count), 100 * (cpuSeconds() - cpuStart) / elapsed / Double(cores)))
    }
    return Double(count) / elapsed
}

/// User and system CPU time of the process so far, in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func bareLoop(_ client: HTTPClient, _ urls: [URL]) async throws -> Double {
    try await timedLoop(of: urls.count) { index in
        let response = try await client.execute(HTTPClientRequest(url: urls[index].absoluteString), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok, body.readableBytes > 0 else { throw CocoaError(.fileReadCorruptFile) }
    }
}

/// Loads every URL through `pipeline`, as many in flight as the bare loop has.
func loadAll(_ pipeline: ImagePipeline, _ urls: [URL]) async throws -> Double {
    try await timedLoop(of: urls.count) { index in _ = try await pipeline.image(for: urls[index]) }
}

func makePipeline(folder: String, loader: HTTPDataLoader, decoder: any ImageDecoding) throws -> (ImagePipeline, DiskCache) {
    try? FileManager.default.removeItem(atPath: folder)
    let disk = try DiskCache(path: folder, configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
    let pipeline = ImagePipeline(
        configuration: .init(
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
    let cpuStart = cpuSeconds()
    let start = ContinuousClock.now
    DispatchQueue.concurrentPerform(iterations: cores) { _ in
        while true {
            let index = next.take()
            guard index < paths.count else { return }
            if let data = FileManager.default.contents(atPath: paths[index]),
                let image = try? JPEGDecoder().decode(data, options: ImageDecodingOptions())
            {
                if keeping { kept.append(image) }
                continue
            }
            _ = failures.take()
        }
    }
    let elapsed = ContinuousClock.now - start
    if ProcessInfo.processInfo.environment["CPU"] != nil {
        print(String(format: "  direct: %.0f CPU-µs per load", (cpuSeconds() - cpuStart) * 1e6 / Double(paths.count)))
    }
    guard failures.take() == 0 else { throw CocoaError(.fileReadCorruptFile) }
    return Double(paths.count) / seconds(elapsed)
}

/// The least any pipeline that decodes off the caller's threads can do for a
/// disk hit: read and decode the file on one of `cores` plain threads, and
/// resume the waiting task, with `concurrency` loads in flight.
func handedOffDecode(_ paths: [String], threads: HandOffThreads) async throws -> Double {
    try await timedLoop(of: paths.count) { index in
        // The image comes back to the caller, as a pipeline's does, and is freed there.
        let image = await threads.run {
            FileManager.default.contents(atPath: paths[index]).flatMap { try? JPEGDecoder().decode($0, options: ImageDecodingOptions()) }
        }
        guard image != nil else { throw CocoaError(.fileReadCorruptFile) }
    }
}

/// The bare loop plus one hand-off of every body to a plain thread and back:
/// the least a pipeline that decodes off the cooperative pool adds to a
/// download. With `folder`, the thread also writes the body the way a
/// crash-safe store must at least: a new file, then a rename over the entry.
func bareLoopHandedOff(_ client: HTTPClient, _ urls: [URL], threads: HandOffThreads, storingIn folder: String? = nil) async throws -> Double {
    if let folder {
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    return try await timedLoop(of: urls.count) { index in
        let response = try await client.execute(HTTPClientRequest(url: urls[index].absoluteString), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        let stored = await threads.run { () -> Bool in
            guard let folder else { return body.readableBytes > 0 }
            let temporary = "\(folder)/\(index).tmp"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return false }
            let written = body.withUnsafeReadableBytes { write(fd, $0.baseAddress, $0.count) }
            return close(fd) == 0 && written == body.readableBytes && rename(temporary, "\(folder)/\(index)") == 0
        }
        guard response.status == .ok, stored else { throw CocoaError(.fileReadCorruptFile) }
    }
}

/// Plain threads that run submitted closures first come first served: a
/// hand-off with nothing else around it.
final class HandOffThreads: @unchecked Sendable {
    // @unchecked: `jobs` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0

    init(count: Int) {
        for _ in 0..<count {
            Thread { [self] in
                while true {
                    condition.lock()
                    while head == jobs.count { condition.wait() }
                    let job = jobs[head]
                    head += 1
                    if head == jobs.count {
                        jobs.removeAll(keepingCapacity: true)
                        head = 0
                    }
                    condition.unlock()
                    job()
                }
            }.start()
        }
    }

    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withUnsafeContinuation { continuation in
            condition.lock()
            jobs.append { continuation.resume(returning: body()) }
            condition.unlock()
            condition.signal()
        }
    }
}

/// Reads every entry from `disk` and decodes it, on `cores` threads: the
/// disk cache's part of a disk hit, without the pipeline.
func cachedDecode(_ disk: DiskCache, keys: [String]) throws -> Double {
    let next = Locked(0)
    let failures = Locked(0)
    let start = ContinuousClock.now
    DispatchQueue.concurrentPerform(iterations: cores) { _ in
        while true {
            let index = next.take()
            guard index < keys.count else { return }
            if let data = disk.cachedData(forKey: keys[index])?.data, (try? JPEGDecoder().decode(data, options: ImageDecodingOptions())) != nil {
                continue
            }
            _ = failures.take()
        }
    }
    let elapsed = ContinuousClock.now - start
    guard failures.take() == 0 else { throw CocoaError(.fileReadCorruptFile) }
    return Double(keys.count) / seconds(elapsed)
}

/// Decoded images kept alive, as a memory cache keeps them.
final class KeptImages: @unchecked Sendable {
    // @unchecked: `images` is only touched with `lock` held.
    private let lock = NSLock()
    private var images: [Image] = []
    func append(_ image: Image) {
        lock.lock()
        defer { lock.unlock() }
        images.append(image)
    }
}

/// A counter behind a lock.
final class Locked: @unchecked Sendable {
    // @unchecked: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value: Int
    init(_ value: Int) { self.value = value }
    func take() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value - 1
    }
}
