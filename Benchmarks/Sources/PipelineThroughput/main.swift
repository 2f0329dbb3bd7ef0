import AsyncHTTPClient
import CacheWorkloads
import Foundation
import Imago
import ImagoSandbox
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
// 3. Floors: what any pipeline that decodes off the caller's threads must add
//    at least: the bare loop with each body handed to a plain thread and back
//    (and written there as a new file renamed into place, as a crash-safe
//    store must), and the direct decode done on a plain thread for a waiting
//    task that gets the image back.
//
// Within one process a variant's rate depends on the heap the variants before
// it left behind; isolated-throughput.sh runs each in a process of its own.
//
// Prints the median of each over the rounds. Run in release:
//     swift run -c release PipelineThroughput [rounds]
// PROFILE=<variant> repeats one variant for a profiler (Profiles.swift).

let jpeg = try photoLikeJPEG()
let server = try await TestImageServer.start(threads: 1)
// Fresh for an hour, so that the disk-hit pass reads the disk only.
for index in 0..<count { server.setRoute("/img/\(index).jpg", .init(headers: [.cacheControl: "max-age=3600"], body: jpeg)) }
var clientConfiguration = HTTPClient.Configuration()
clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
let loader = HTTPDataLoader(configuration: .init(maximumConnectionsPerHost: concurrency))
try FileManager.default.createDirectory(atPath: scratch + "/files", withIntermediateDirectories: true)
let paths = (0..<count).map { scratch + "/files/\($0).jpg" }
for path in paths { _ = FileManager.default.createFile(atPath: path, contents: jpeg) }
let handOff = HandOffThreads(count: cores)

if let name = ProcessInfo.processInfo.environment["PROFILE"] {
    try await profile(name, server: server, client: client, loader: loader, jpeg: jpeg, paths: paths, handOff: handOff)
    try? FileManager.default.removeItem(atPath: scratch)
    exit(0)
}

print("PipelineThroughput: \(count) loads of a \(jpeg.count)-byte JPEG, \(rounds) rounds, \(cores) cores, \(concurrency) downloads in flight")
var bare: [Double] = []
var skipped: [Double] = []
var decoded: [Double] = []
var diskHits: [Double] = []
var direct: [Double] = []
var diskHitsUncached: [Double] = []
var directKept: [Double] = []
var noDisk: [Double] = []
var cacheRead: [Double] = []
var bareHandedOff: [Double] = []
var bareStored: [Double] = []
var handedOff: [Double] = []
for round in 0..<rounds {
    // Fresh URLs each round so that nothing is served from a previous round's caches.
    let urls = (0..<count).map { server.url("/img/\($0).jpg?round=\(round)") }
    bare.append(try await bareLoop(client, urls))
    bareHandedOff.append(try await bareLoopHandedOff(client, urls.map { URL(string: $0.absoluteString + "&handoff")! }, threads: handOff))
    bareStored.append(
        try await bareLoopHandedOff(client, urls.map { URL(string: $0.absoluteString + "&stored")! }, threads: handOff, storingIn: scratch + "/bare"))

    let (skipping, skippingDisk) = try makePipeline(folder: scratch + "/skip", loader: loader, decoder: PassThroughDecoder())
    skipped.append(try await loadAll(skipping, urls))
    skippingDisk.close()

    let memoryOnly = ImagePipeline(
        configuration: .init(
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
    cacheRead.append(try cachedDecode(uncachedDisk, keys: urls.map(\.absoluteString)))
    uncachedDisk.close()

    direct.append(try directDecode(paths, keeping: false))
    directKept.append(try directDecode(paths, keeping: true))
    handedOff.append(try await handedOffDecode(paths, threads: handOff))
    print(
        String(
            format:
                "round %d: bare %.0f/s, pipeline (decode skipped) %.0f/s (no disk cache %.0f/s), pipeline (decoded) %.0f/s, disk hits %.0f/s (no memory cache %.0f/s), DiskCache read + decode %.0f/s, direct read+decode %.0f/s (keeping the images %.0f/s), bare + hand-off %.0f/s (+ file store %.0f/s), direct + hand-off %.0f/s",
            round + 1, bare.last!, skipped.last!, noDisk.last!, decoded.last!, diskHits.last!, diskHitsUncached.last!, cacheRead.last!, direct.last!,
            directKept.last!, bareHandedOff.last!, bareStored.last!, handedOff.last!))
}
print(
    String(
        format: """
            median over %d rounds:
              cold, bare AsyncHTTPClient loop          %6.0f requests/s
              cold, bare loop + hand-off to a thread   %6.0f requests/s  (%.0f%% of bare: the floor's cost)
              cold, bare + hand-off + file and rename  %6.0f requests/s  (%.0f%% of bare)
              cold, pipeline, decode skipped           %6.0f requests/s  (%.0f%% of bare)
              cold, pipeline, no disk cache, no decode %6.0f requests/s  (%.0f%% of bare)
              cold, pipeline, JPEG decoded             %6.0f requests/s  (%.0f%% of bare)
              direct read + TurboJPEG decode           %6.0f images/s
              direct, decoded on a thread, handed back %6.0f images/s    (%.0f%% of direct: the floor's cost)
              DiskCache read + TurboJPEG decode        %6.0f images/s    (%.0f%% of direct)
              disk hits, pipeline, no memory cache     %6.0f images/s    (%.0f%% of direct)
              direct, images kept as a cache would     %6.0f images/s
              disk hits, pipeline, memory cache        %6.0f images/s    (%.0f%% of direct keeping the images, %.0f%% of direct)
            """, rounds, median(bare), median(bareHandedOff), 100 * median(bareHandedOff) / median(bare), median(bareStored),
        100 * median(bareStored) / median(bare), median(skipped), 100 * median(skipped) / median(bare),
        median(noDisk), 100 * median(noDisk) / median(bare), median(decoded), 100 * median(decoded) / median(bare),
        median(direct), median(handedOff), 100 * median(handedOff) / median(direct), median(cacheRead), 100 * median(cacheRead) / median(direct),
        median(diskHitsUncached), 100 * median(diskHitsUncached) / median(direct),
        median(directKept), median(diskHits), 100 * median(diskHits) / median(directKept), 100 * median(diskHits) / median(direct)))
try await client.shutdown().get()
try await loader.shutdown()
try await server.shutdown()
try? FileManager.default.removeItem(atPath: scratch)
