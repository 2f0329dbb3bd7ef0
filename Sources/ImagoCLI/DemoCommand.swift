import ArgumentParser
import Foundation
import Imago
import ImagoSandbox

/// `imago demo`: the pipeline end to end on an embedded image server: a cold
/// pass from the network, a pass from disk with a new pipeline on the same
/// folder, a pass from memory; a table of what each cost and a contact sheet.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Load a generated gallery from an embedded server four times: network, disk, memory, revalidated (304)."
    )

    @Option(help: "How many images the gallery has.")
    var count = 300

    @Option(help: "The thumbnail size the images are decoded for, in pixels.")
    var thumbnail = 128

    @Option(help: "Folder for the cache and the contact sheet (default: a new temporary folder).")
    var output: String?

    func validate() throws {
        guard count > 0, thumbnail > 0 else { throw ValidationError("--count and --thumbnail must be positive") }
    }

    func run() async throws {
        let folder = output ?? NSTemporaryDirectory() + "imago-demo-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let generationStart = ContinuousClock.now
        let gallery = try Gallery(count: count)
        let server = try await TestImageServer.start()
        server.serve(gallery)
        print(
            "Imago demo: \(gallery.items.count) images (\(formatBytes(gallery.byteCount)), JPEG, PNG and WebP, up to 2400 px) generated in \(format(ContinuousClock.now - generationStart, in: .milliseconds)) ms"
        )
        print("image server: http://127.0.0.1:\(server.port)/gallery/")
        print("cache folder: \(folder)/cache\n")

        let requests = gallery.items.map { item in
            ImageRequest(url: server.url(item.path), targetSize: ImageSize(width: thumbnail, height: thumbnail))
        }
        var passes: [DemoPass] = []
        var images: [Image?] = []
        do {
            let disk = try openCache(folder)
            let pipeline = ImagePipeline(configuration: .init(dataCache: disk))
            passes.append(await DemoPass.run("network", requests, pipeline, server))
            disk.close()
        }
        do {
            let disk = try openCache(folder)
            defer { disk.close() }
            let pipeline = ImagePipeline(configuration: .init(dataCache: disk))
            passes.append(await DemoPass.run("disk", requests, pipeline, server))
            let memory = await DemoPass.run("memory", requests, pipeline, server)
            passes.append(memory)
            images = memory.images
            // Ask the server about every stored image: each answers 304, and the stored bytes are decoded.
            let revalidate = requests.map { request in
                var request = request
                request.networkPolicy = .revalidate
                return request
            }
            passes.append(await DemoPass.run("revalidate", revalidate, pipeline, server))
        }
        try await server.shutdown()
        print("")
        DemoPass.printTable(passes)

        var sheet = ContactSheet(count: images.count, cellSize: thumbnail, columns: 20)
        for (index, image) in images.enumerated() {
            if let image { sheet.draw(image, at: index) }
        }
        let sheetPath = folder + "/contact-sheet.png"
        if let image = sheet.image {
            try PNGEncoder().encode(image).write(to: URL(fileURLWithPath: sheetPath))
            print("\ncontact sheet: \(sheetPath) (\(image.width)x\(image.height))")
        }
        let failures = passes.reduce(0) { $0 + $1.failures.count }
        if failures > 0 {
            for line in passes.flatMap(\.failures).prefix(10) { Terminal.error(line) }
            throw ExitCode(ExitStatus.partialFailure)
        }
    }

    private func openCache(_ folder: String) throws -> DiskCache {
        do {
            return try DiskCache(path: folder + "/cache", configuration: .init(maintenanceInterval: nil))
        } catch {
            Terminal.error("\(error)")
            throw ExitCode(ExitStatus.cacheUnavailable)
        }
    }
}

/// One pass over the gallery: what it loaded, from where, and how fast.
struct DemoPass {
    var name: String
    var images: [Image?] = []
    var bytes = 0
    var networkRequests = 0
    var diskHits = 0
    var memoryHits = 0
    var latencies: [Duration] = []
    var wall: Duration = .zero
    var failures: [String] = []

    /// Loads every request at once (the pipeline's limits apply) and records the outcome.
    static func run(_ name: String, _ requests: [ImageRequest], _ pipeline: ImagePipeline, _ server: TestImageServer) async -> DemoPass {
        var pass = DemoPass(name: name)
        let requestsBefore = server.totalRequestCount
        let progress = ProgressBar(label: name.padding(toLength: 10, withPad: " ", startingAt: 0), total: requests.count)
        let start = ContinuousClock.now
        let results = await withTaskGroup(of: (Int, Result<ImageResponse, ImagePipeline.Error>).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask {
                    defer { progress.advance() }
                    do throws(ImagePipeline.Error) {
                        return (index, .success(try await pipeline.image(for: request)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results = [Result<ImageResponse, ImagePipeline.Error>?](repeating: nil, count: requests.count)
            for await (index, result) in group { results[index] = result }
            return results
        }
        pass.wall = ContinuousClock.now - start
        pass.networkRequests = server.totalRequestCount - requestsBefore
        for result in results {
            switch result {
            case .success(let response):
                pass.images.append(response.image)
                pass.bytes += response.dataCount ?? 0
                pass.latencies.append(response.timings.total)
                if response.source == .disk { pass.diskHits += 1 }
                if response.source == .memory { pass.memoryHits += 1 }
            case .failure(let error):
                pass.images.append(nil)
                pass.failures.append("\(error)")
            case nil:
                pass.images.append(nil)
            }
        }
        return pass
    }

    func percentile(_ p: Double) -> Duration {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    static func printTable(_ passes: [DemoPass]) {
        let header = ["pass", "images", "bytes", "network", "disk hits", "memory hits", "p50 ms", "p99 ms", "wall ms"]
        let rows = passes.map { pass in
            [
                pass.name, "\(pass.images.compactMap { $0 }.count)", formatBytes(pass.bytes), "\(pass.networkRequests)",
                "\(pass.diskHits)", "\(pass.memoryHits)", format(pass.percentile(0.5), in: .milliseconds),
                format(pass.percentile(0.99), in: .milliseconds),
                format(pass.wall, in: .milliseconds),
            ]
        }
        Terminal.printTable(header: header, rows: rows)
    }
}
