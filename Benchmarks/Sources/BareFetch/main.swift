import AsyncHTTPClient
import Foundation
import NIOCore

// The least a cold answer of `thumbor-compare.sh` can spend on its source:
// a bare AsyncHTTPClient download of each URL (16 in flight, the body
// collected and copied into a Data, as the pipeline's loader keeps it),
// with the process's CPU time per download. Four rounds of COUNT new URLs.
//
//     swift run -c release BareFetch http://127.0.0.2:18480/s/1024 [COUNT]
//
// The origin is thumbor-compare.sh's nginx (/s/SIZE/N/anything.jpg is N.jpg).

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: BareFetch BASE_URL [COUNT]   (BASE_URL/N/name.jpg must be a source, N in 0..<32)")
    exit(64)
}
let base = arguments[1]
let count = arguments.count > 2 ? Int(arguments[2]) ?? 3000 : 3000
let concurrency = 16
let client = HTTPClient(eventLoopGroupProvider: .singleton)

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

func download(_ url: String) async throws -> Int {
    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
    let body = try await response.body.collect(upTo: 1 << 26)
    return Data(body.readableBytesView).count
}

for round in 0..<4 {
    let cpuBefore = cpuSeconds()
    let start = ContinuousClock.now
    let bytes = try await withThrowingTaskGroup(of: Int.self) { group in
        var started = 0
        var total = 0
        func startNext(_ group: inout ThrowingTaskGroup<Int, any Error>) {
            let url = "\(base)/\(started % 32)/bare-\(round)-\(started).jpg"
            started += 1
            group.addTask { try await download(url) }
        }
        for _ in 0..<min(concurrency, count) { startNext(&group) }
        while let received = try await group.next() {
            total += received
            if started < count { startNext(&group) }
        }
        return total
    }
    let elapsed = ContinuousClock.now - start
    let cpu = (cpuSeconds() - cpuBefore) * 1000 / Double(count)
    print("round \(round): \(count) downloads of \(bytes / count) bytes, \(String(format: "%.3f", cpu)) CPU ms each, \(elapsed)")
}
try await client.shutdown().get()
