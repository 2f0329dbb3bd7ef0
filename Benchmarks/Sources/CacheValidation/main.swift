import CacheWorkloads
import Foundation
import Imago
import ImagoSandbox
import Synchronization

// What HTTP cache validation costs a disk hit, measured in one run on one
// machine, so that the ratios mean something. 1,000 distinct URLs of a ~20 KB
// JPEG from the in-process loopback server; a pipeline with no memory cache
// (every load reaches the disk tier) and a disk cache on /dev/shm; 16 loads in
// flight. Per pass of the 1,000 URLs, loads per second and the median latency
// of one load, for:
//
// 1. plain disk hits: entries stored through `pipeline.cache.storeData`,
//    without HTTP metadata, so always served (the baseline);
// 2. fresh HTTP hits: stored from `Cache-Control: max-age=3600` responses,
//    served from disk without a request;
// 3. revalidated hits: stored from `max-age=0` responses with an ETag; every
//    load sends If-None-Match, the server answers 304, and the stored body is
//    decoded (and stored again with the refreshed metadata);
// 4. full downloads: `.reload`, a 200 with the body every time, stored again.
//
// Every response's source and freshness is checked, and the server's request
// count for each pass, so that each case measures what it says; any mismatch
// aborts. Prints the median of each over the rounds. Run in release:
//     swift run -c release CacheValidation [rounds]

let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 5 : 5
let count = 1_000
let concurrency = 16
let cores = ProcessInfo.processInfo.activeProcessorCount
let scratch = (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()) + "/imago-validation-\(getpid())"
let etag = "\"imago-bench-1\""

/// What a response said about itself, e.g. "disk/revalidated".
func outcome(of response: ImageResponse) -> String {
    switch response.freshness {
    case .fresh: "\(response.source)/fresh"
    case .revalidated: "\(response.source)/revalidated"
    case .stale(let reason): "\(response.source)/stale(\(reason))"
    }
}

/// One pass over the URLs: its rate, the median latency of one load, and
/// the loads that did not come back as expected.
struct Pass {
    var rate: Double
    var latency: Double
    var mismatches: Int
    var firstMismatch: String?
}

/// Loads every URL through `pipeline` with `policy`, `concurrency` at a time,
/// timing each load and checking that it came back as `expected`.
func pass(_ pipeline: ImagePipeline, _ urls: [URL], policy: ImageRequest.NetworkPolicy, expected: String) async -> Pass {
    let cursor = Cursor()
    let start = ContinuousClock.now
    let workers = await withTaskGroup(of: (latencies: [Double], mismatches: [String]).self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var latencies: [Double] = []
                var mismatches: [String] = []
                while true {
                    let index = cursor.take()
                    guard index < urls.count else { return (latencies, mismatches) }
                    let loadStart = ContinuousClock.now
                    do {
                        let response = try await pipeline.image(for: ImageRequest(url: urls[index], networkPolicy: policy))
                        latencies.append(seconds(ContinuousClock.now - loadStart))
                        let got = outcome(of: response)
                        if got != expected { mismatches.append("\(urls[index].path): \(got)") }
                    } catch {
                        mismatches.append("\(urls[index].path): \(error)")
                    }
                }
            }
        }
        return await group.reduce(into: [(latencies: [Double], mismatches: [String])]()) { $0.append($1) }
    }
    let elapsed = seconds(ContinuousClock.now - start)
    let mismatches = workers.flatMap(\.mismatches)
    return Pass(
        rate: Double(urls.count) / elapsed, latency: median(workers.flatMap(\.latencies)),
        mismatches: mismatches.count, firstMismatch: mismatches.first
    )
}

/// The next index to load, shared by the workers of a pass.
final class Cursor: Sendable {
    private let next = Atomic<Int>(0)
    func take() -> Int { next.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// Serves `jpeg` with `cacheControl` and an ETag, answering a matching
/// If-None-Match with 304 as an origin server does, and counts the 304s.
final class ValidatingRoute: Sendable {
    private let jpeg: Data
    private let headers: HTTPFields
    private let notModified = Atomic<Int>(0)

    init(jpeg: Data, cacheControl: String) {
        self.jpeg = jpeg
        headers = [.contentType: "image/jpeg", .cacheControl: cacheControl, .eTag: etag]
    }

    /// The 304s sent so far.
    var notModifiedCount: Int { notModified.load(ordering: .relaxed) }

    func respond(to request: TestImageServer.Request) -> TestImageServer.Response {
        guard request.headers[.ifNoneMatch] == etag else { return .init(headers: headers, body: jpeg) }
        notModified.add(1, ordering: .relaxed)
        return .init(status: 304, headers: headers)
    }
}

/// Stops the run if a pass, the server's request count or the other counts
/// (what, got, expected) were not what its case measures.
func check(_ name: String, _ pass: Pass, requests: Int, expectedRequests: Int, _ counts: [(String, Int, Int)] = []) {
    var problems: [String] = []
    if pass.mismatches > 0 { problems.append("\(pass.mismatches) of \(count) responses not as expected, e.g. \(pass.firstMismatch ?? "?")") }
    if requests != expectedRequests { problems.append("the server saw \(requests) requests, expected \(expectedRequests)") }
    for (what, got, expected) in counts where got != expected { problems.append("\(what): \(got), expected \(expected)") }
    guard !problems.isEmpty else { return }
    print("\(name): " + problems.joined(separator: "; "))
    try? FileManager.default.removeItem(atPath: scratch)
    exit(1)
}

let jpeg = try photoLikeJPEG()
let server = try await TestImageServer.start(threads: 1)
let fresh = ValidatingRoute(jpeg: jpeg, cacheControl: "max-age=3600")
let stale = ValidatingRoute(jpeg: jpeg, cacheControl: "max-age=0")
let reload = ValidatingRoute(jpeg: jpeg, cacheControl: "max-age=0")
for index in 0..<count {
    server.setRoute("/fresh/\(index).jpg") { [fresh] in fresh.respond(to: $0) }
    server.setRoute("/stale/\(index).jpg") { [stale] in stale.respond(to: $0) }
    server.setRoute("/reload/\(index).jpg") { [reload] in reload.respond(to: $0) }
}
let plainURLs = (0..<count).map { server.url("/plain/\($0).jpg") }
let freshURLs = (0..<count).map { server.url("/fresh/\($0).jpg") }
let staleURLs = (0..<count).map { server.url("/stale/\($0).jpg") }
let reloadURLs = (0..<count).map { server.url("/reload/\($0).jpg") }

let loader = HTTPDataLoader(configuration: .init(maximumConnectionsPerHost: concurrency))
let disk = try DiskCache(path: scratch, configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
let pipeline = ImagePipeline(
    configuration: .init(
        dataLoader: loader, imageCache: nil, dataCache: disk,
        maximumConcurrentDownloads: concurrency, maximumConcurrentDownloadsPerHost: concurrency
    ))

// Fill: the plain entries through the cache API, the HTTP ones with one pass
// each (which also opens the connections).
for url in plainURLs { try await pipeline.cache.storeData(jpeg, forKey: url.absoluteString) }
for (name, urls) in [("fill fresh", freshURLs), ("fill stale", staleURLs), ("fill reload", reloadURLs)] {
    let before = server.totalRequestCount
    check(
        name, await pass(pipeline, urls, policy: .useCache, expected: "network/fresh"),
        requests: server.totalRequestCount - before, expectedRequests: count)
}

print(
    "CacheValidation: \(count) loads of a \(jpeg.count)-byte JPEG per pass, \(rounds) rounds, \(cores) cores, \(concurrency) loads in flight, no memory cache"
)
var results: [[Pass]] = [[], [], [], []]
for round in 0..<rounds {
    // Each case's pass, then its checks against the server's and the pipeline's counts.
    var requests = server.totalRequestCount
    var statistics = pipeline.statistics
    let notModified = stale.notModifiedCount
    /// A pass, the requests the server saw during it, and the pipeline's counts before and after.
    func measure(
        _ urls: [URL], _ policy: ImageRequest.NetworkPolicy, expected: String
    ) async -> (Pass, requests: Int, ImagePipeline.Statistics, ImagePipeline.Statistics) {
        let measured = await pass(pipeline, urls, policy: policy, expected: expected)
        let before = (requests, statistics)
        (requests, statistics) = (server.totalRequestCount, pipeline.statistics)
        return (measured, requests - before.0, before.1, statistics)
    }
    let (plain, plainRequests, plainBefore, plainAfter) = await measure(plainURLs, .useCache, expected: "disk/fresh")
    check("plain disk hit", plain, requests: plainRequests, expectedRequests: 0, [("disk hits", plainAfter.diskHits - plainBefore.diskHits, count)])
    let (freshHit, freshRequests, freshBefore, freshAfter) = await measure(freshURLs, .useCache, expected: "disk/fresh")
    check(
        "fresh HTTP hit", freshHit, requests: freshRequests, expectedRequests: 0, [("disk hits", freshAfter.diskHits - freshBefore.diskHits, count)])
    let (revalidated, staleRequests, staleBefore, staleAfter) = await measure(staleURLs, .useCache, expected: "disk/revalidated")
    check(
        "revalidated hit", revalidated, requests: staleRequests, expectedRequests: count,
        [
            ("revalidations", staleAfter.revalidations - staleBefore.revalidations, count),
            ("304s sent", stale.notModifiedCount - notModified, count),
            ("network loads", staleAfter.networkLoads - staleBefore.networkLoads, 0),
        ])
    let (download, reloadRequests, reloadBefore, reloadAfter) = await measure(reloadURLs, .reload, expected: "network/fresh")
    check(
        "full download", download, requests: reloadRequests, expectedRequests: count,
        [
            ("network loads", reloadAfter.networkLoads - reloadBefore.networkLoads, count),
            ("bytes downloaded", reloadAfter.bytesDownloaded - reloadBefore.bytesDownloaded, count * jpeg.count),
            ("304s sent", reload.notModifiedCount, 0),
        ])
    for (index, measured) in [plain, freshHit, revalidated, download].enumerated() { results[index].append(measured) }
    print(
        String(
            format:
                "round %d: plain disk hit %.0f/s (%.2f ms), fresh HTTP hit %.0f/s (%.2f ms), revalidated %.0f/s (%.2f ms), full download %.0f/s (%.2f ms); 0 mismatches",
            round + 1, plain.rate, 1e3 * plain.latency, freshHit.rate, 1e3 * freshHit.latency,
            revalidated.rate, 1e3 * revalidated.latency, download.rate, 1e3 * download.latency))
}

let names = ["plain disk hit (baseline)", "fresh HTTP hit", "revalidated hit (304)", "full download (.reload)"]
let baseRate = median(results[0].map(\.rate))
let baseLatency = median(results[0].map(\.latency))
print("median over \(rounds) rounds:")
print("  case                         loads/s  of baseline   median latency  of baseline")
for (name, passes) in zip(names, results) {
    let rate = median(passes.map(\.rate))
    let latency = median(passes.map(\.latency))
    print(
        "  " + name.padding(toLength: 27, withPad: " ", startingAt: 0)
            + String(format: " %7.0f  %9.2fx   %11.3f ms  %9.2fx", rate, rate / baseRate, 1e3 * latency, latency / baseLatency))
}
disk.close()
try await loader.shutdown()
try await server.shutdown()
try? FileManager.default.removeItem(atPath: scratch)
