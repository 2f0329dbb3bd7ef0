import AsyncHTTPClient
import Foundation
import Imago
import ImagoSandbox

/// Repeats one variant `rounds` times, for a profiler (`perf record`):
/// PROFILE=bare | barehandoff | barestore | loader | instant | nodisk | cold | diskhits | cacheread | direct | handoff.
/// With CPU=1 every timed loop also prints its CPU time per load.
func profile(
    _ name: String, server: TestImageServer, client: HTTPClient, loader: HTTPDataLoader, jpeg: Data, paths: [String], handOff: HandOffThreads
) async throws {
    let keys = (0..<count).map { server.url("/img/\($0).jpg").absoluteString }
    if name == "diskhits" || name == "cacheread" {
        // One cold pass fills the cache the rounds read.
        let (filling, disk) = try makePipeline(folder: scratch + "/hits", loader: loader, decoder: PassThroughDecoder())
        _ = try await loadAll(filling, keys.map { URL(string: $0)! })
        disk.close()
    }
    for round in 0..<rounds {
        let urls = (0..<count).map { server.url("/img/\($0).jpg?profile=\(round)") }
        let rate: Double
        switch name {
        case "bare":
            rate = try await bareLoop(client, urls)
        case "barehandoff":
            rate = try await bareLoopHandedOff(client, urls, threads: handOff)
        case "barestore":
            rate = try await bareLoopHandedOff(client, urls, threads: handOff, storingIn: scratch + "/bare")
        case "loader":
            rate = try await timedLoop(of: urls.count) { index in
                _ = try await loader.loadData(for: DataRequest(url: urls[index]), progress: { _ in })
            }
        case "instant":
            // The pipeline's own cost: no HTTP, no disk, no decoding; 10x the loads.
            let pipeline = ImagePipeline(
                configuration: .init(
                    dataLoader: InstantLoader(data: jpeg), dataCache: nil, decoders: [PassThroughDecoder()],
                    maximumConcurrentDownloads: concurrency, maximumConcurrentDownloadsPerHost: concurrency
                ))
            rate = try await loadAll(pipeline, (0..<(10 * count)).map { server.url("/img/\($0).jpg?instant=\(round)") })
        case "nodisk", "cold":
            let (pipeline, disk) =
                name == "cold"
                ? try makePipeline(folder: scratch + "/profile", loader: loader, decoder: PassThroughDecoder())
                : (
                    ImagePipeline(
                        configuration: .init(
                            dataLoader: loader, dataCache: nil, decoders: [PassThroughDecoder()],
                            maximumConcurrentDownloads: concurrency, maximumConcurrentDownloadsPerHost: concurrency
                        )), nil
                )
            rate = try await loadAll(pipeline, urls)
            disk?.close()
        case "diskhits":
            // PASS_THROUGH=1 skips decoding: the pipeline's and the disk cache's cost alone.
            let decoders: [any ImageDecoding]? = ProcessInfo.processInfo.environment["PASS_THROUGH"] != nil ? [PassThroughDecoder()] : nil
            let disk = try DiskCache(path: scratch + "/hits", configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
            let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: nil, dataCache: disk, decoders: decoders))
            rate = try await loadAll(pipeline, keys.map { URL(string: $0)! })
            disk.close()
        case "cacheread":
            let disk = try DiskCache(path: scratch + "/hits", configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
            rate = try cachedDecode(disk, keys: keys)
            disk.close()
        case "direct":
            rate = try directDecode(paths, keeping: false)
        case "handoff":
            rate = try await handedOffDecode(paths, threads: handOff)
        default:
            print("unknown PROFILE \(name)")
            return
        }
        print(String(format: "%@ %.0f/s", name, rate))
    }
}
