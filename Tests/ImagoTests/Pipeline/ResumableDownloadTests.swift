import Foundation
import ImagoConcurrency
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

/// Serves one image with an ETag the way an origin server does Range
/// requests (206 when If-Range matches, 200 otherwise), stalling the first
/// `cuts` responses after `cutAfter` bytes until the client's read timeout
/// gives up (a stall rather than a close, which may lose bytes in flight);
/// with `cutsUntilRanged`, also every whole answer until a Range has been
/// asked for, so that a client that kept too little to continue (a loaded
/// machine reads slowly before its timeout fires) meets the stall again
/// rather than a whole answer.
final class RangeServer: Sendable {
    struct State {
        var body: Data
        var etag: String
        var cuts: Int
        var cutsUntilRanged: Bool
        /// The size of the last body sent whole.
        var lastWholeCount = 0
        var ranges: [String] = []
    }

    static let cutAfter = 100_000
    let state: Locked<State>

    init(body: Data, etag: String = "\"v1\"", cuts: Int = 1, cutsUntilRanged: Bool = false) {
        state = Locked(State(body: body, etag: etag, cuts: cuts, cutsUntilRanged: cutsUntilRanged))
    }

    func respond(to request: TestImageServer.Request) -> TestImageServer.Response {
        state.withLock { state in
            var start = 0
            if let range = request.headers[.range] {
                state.ranges.append(range)
                if request.headers[.ifRange] == state.etag, range.hasPrefix("bytes="), range.hasSuffix("-"),
                    let first = Int(range.dropFirst(6).dropLast()), first < state.body.count
                {
                    start = first
                }
            }
            var headers: HTTPFields = [.eTag: state.etag, .acceptRanges: "bytes", .cacheControl: "max-age=60"]
            if start > 0 { headers[.contentRange] = "bytes \(start)-\(state.body.count - 1)/\(state.body.count)" }
            let slice = Data(state.body[start...])
            let status = start > 0 ? 206 : 200
            if state.cuts > 0 || (state.cutsUntilRanged && state.ranges.isEmpty) {
                state.cuts = max(0, state.cuts - 1)
                return .init(status: status, headers: headers, body: slice, behaviour: .stall(after: Self.cutAfter))
            }
            state.lastWholeCount = slice.count
            return .init(status: status, headers: headers, body: slice)
        }
    }
}

@Suite("Resumable downloads: Range with If-Range, across retries and restarts", .timeLimit(.minutes(10)))
struct ResumableDownloadTests {
    let folder = TemporaryDirectory()

    /// A noise PNG of about 360 KB (noise does not compress), and its pixels.
    static func noise(seed: UInt64) -> (data: Data, image: Image) {
        var generator = SeededGenerator(seed: seed)
        let pixels = (0..<(400 * 300 * 3)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let image = Image(width: 400, height: 300, pixelFormat: .rgb8, pixels: pixels)!
        return ((try? PNGEncoder().encode(image)) ?? Data(), image)
    }

    /// The start of the last Range the server was asked for: the bytes kept
    /// then. No Range may start before the one before it. (On a loaded
    /// machine the client may have read less than the server sent when its
    /// read timeout fires, and a continuation may itself time out, with or
    /// without new bytes, and be asked for again from where it stopped.)
    static func keptCount(_ ranges: [String]) -> Int? {
        let starts = ranges.compactMap { range -> Int? in
            guard range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
            return Int(range.dropFirst(6).dropLast())
        }
        guard !starts.isEmpty, starts.count == ranges.count, starts.first! >= PartialDownload.minimumCount,
            starts.first! <= RangeServer.cutAfter, starts == starts.sorted()
        else { return nil }
        return starts.last
    }

    /// Enough attempts for continuations that time out on a loaded machine.
    static let patient = RetryPolicy(maximumAttempts: 20, initialDelay: .milliseconds(5))

    static let first = noise(seed: 1)
    static let second = noise(seed: 2)

    func withServer(_ ranges: RangeServer, _ body: (TestImageServer, HTTPDataLoader, URL) async throws -> Void) async throws {
        try await withTestServer(.init(readTimeout: .seconds(1))) { server, loader in
            server.setRoute("/big.png") { ranges.respond(to: $0) }
            try await body(server, loader, server.url("/big.png"))
        }
    }

    func pipeline(_ loader: HTTPDataLoader, _ disk: DiskCache, retries: RetryPolicy) -> ImagePipeline {
        ImagePipeline(configuration: .init(dataLoader: loader, imageCache: nil, dataCache: disk, retryPolicy: retries))
    }

    /// The server was asked for ranges that moved forward, and its last,
    /// whole answer was exactly the rest of the first image.
    func expectOnlyTheRestSent(_ ranges: RangeServer) throws {
        let state = ranges.state.withLock { $0 }
        let kept = try #require(Self.keptCount(state.ranges))
        #expect(state.lastWholeCount == Self.first.data.count - kept, "only the rest was sent again")
    }

    func openDisk() throws -> DiskCache {
        try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
    }

    @Test("a body stalled mid-way is continued by the retry with Range and If-Range, and the image is whole")
    func resumeOnRetry() async throws {
        let ranges = RangeServer(body: Self.first.data, cutsUntilRanged: true)
        try await withServer(ranges) { server, loader, url in
            let disk = try openDisk()
            defer { disk.close() }
            let response = try await pipeline(loader, disk, retries: Self.patient).image(for: url)
            #expect(response.image == Self.first.image)
            try expectOnlyTheRestSent(ranges)
            #expect(server.lastRequest("/big.png")?.headers[.ifRange] == "\"v1\"")
            #expect(disk.cachedData(forKey: url.absoluteString)?.data == Self.first.data)
            #expect(!disk.containsData(forKey: DiskKey.partialDownload(url.absoluteString)))
        }
    }

    @Test("the kept bytes survive a restart: a new pipeline on the same folder asks only for the rest")
    func resumeAfterRestart() async throws {
        let ranges = RangeServer(body: Self.first.data, cutsUntilRanged: true)
        try await withServer(ranges) { _, loader, url in
            do {
                let disk = try openDisk()
                defer { disk.close() }
                // Single attempts until one kept enough to continue: on a
                // loaded machine the read timeout may fire before the client
                // has read 16 KB, and then nothing is kept.
                var kept = 0
                for _ in 0..<20 where kept < PartialDownload.minimumCount {
                    await #expect(throws: ImagePipeline.Error.self) { try await pipeline(loader, disk, retries: .none).image(for: url) }
                    kept = disk.cachedData(forKey: DiskKey.partialDownload(url.absoluteString))?.data.count ?? 0
                }
                #expect((PartialDownload.minimumCount...RangeServer.cutAfter).contains(kept))
                #expect(!disk.containsData(forKey: url.absoluteString))
            }
            let disk = try openDisk()
            defer { disk.close() }
            let response = try await pipeline(loader, disk, retries: Self.patient).image(for: url)
            #expect(response.image == Self.first.image)
            try expectOnlyTheRestSent(ranges)
        }
    }

    @Test("if the image changed meanwhile, If-Range no longer matches: the server's 200 replaces the kept bytes")
    func changedMeanwhile() async throws {
        let ranges = RangeServer(body: Self.first.data)
        try await withServer(ranges) { _, loader, url in
            let disk = try openDisk()
            defer { disk.close() }
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline(loader, disk, retries: .none).image(for: url) }
            ranges.state.withLock {
                $0.body = Self.second.data
                $0.etag = "\"v2\""
            }
            let response = try await pipeline(loader, disk, retries: Self.patient).image(for: url)
            #expect(response.image == Self.second.image)
            #expect(!disk.containsData(forKey: DiskKey.partialDownload(url.absoluteString)))
        }
    }

    @Test("the kept bytes are tied to a strong ETag, else to Last-Modified, and need a validator and 16 KB")
    func validators() {
        let url = URL(fileURLWithPath: "/")
        func kept(_ headers: HTTPFields, count: Int = 20_000) -> PartialDownload? {
            let response = DataLoadingResponse(data: Data(count: count), headers: headers, url: url)
            var error = DataLoadingError(.network, url: url)
            error.partial = response
            return PartialDownload(from: error, continuing: nil)
        }
        let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(kept([.eTag: "\"a\"", .lastModified: lastModified])?.validator == "\"a\"")
        #expect(kept([.eTag: "W/\"a\"", .lastModified: lastModified])?.validator == lastModified, "weak ETags cannot be If-Range")
        #expect(kept([.eTag: "W/\"a\""]) == nil)
        #expect(kept([:]) == nil)
        #expect(kept([.eTag: "\"a\""], count: 1000) == nil, "too small to be worth a range")
        #expect(kept([.eTag: "\"a\""]).map { $0.rangeHeaders } == [.range: "bytes=20000-", .ifRange: "\"a\""])
    }

    @Test("Content-Range values are parsed strictly; a 206 that does not continue the kept bytes is refused")
    func contentRange() {
        #expect(ContentRange("bytes 100-199/200") == ContentRange("bytes 100-199/200"))
        #expect(ContentRange("bytes 100-199/200")?.total == 200)
        #expect(ContentRange("bytes 100-199/*")?.total == nil)
        for bad in [nil, "", "bytes", "bytes 5-4/10", "bytes 0-9/5", "items 0-9/10", "bytes -1-9/10", "bytes 0-9"] {
            #expect(ContentRange(bad) == nil, "\(bad ?? "nil")")
        }
        let kept = PartialDownload(data: Data(count: 100), validator: "\"v1\"")
        func part(_ range: String, count: Int) -> DataLoadingResponse {
            DataLoadingResponse(data: Data(count: count), statusCode: 206, headers: [.contentRange: range], url: URL(fileURLWithPath: "/"))
        }
        #expect(kept.completed(by: part("bytes 100-149/150", count: 50))?.data.count == 150)
        #expect(kept.completed(by: part("bytes 90-149/150", count: 60)) == nil, "overlaps the kept bytes")
        #expect(kept.completed(by: part("bytes 100-149/200", count: 50)) == nil, "stops before the end")
        #expect(kept.completed(by: part("bytes 100-149/150", count: 40)) == nil, "shorter than it says")
    }
}
