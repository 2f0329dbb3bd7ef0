import CacheWorkloads
import Foundation

// imago serve's thumbnail rate on one core against the same transformation
// in a bare loop on the same core, round by round, and its result-cache hits.
//
// Two processes, so that the load generator never takes the server's core:
// this one (the driver) starts `ServeThroughput serve` pinned to core 0
// (`taskset -c 0`): a local origin, the service, its HTTP server and the
// bare loop, all in that process; and it runs `wrk` pinned to core 1 as
// the load. Rounds alternate: wrk against the server for a few seconds, then
// the bare loop in the server's process for as long (the server idle), the
// order swapped every round.
//
// Sources: 16 photo-like 1024x768 JPEGs (q85) with `Cache-Control:
// max-age=3600`, downloaded once into the service's disk cache. Every wrk
// request is a new answer of the same work: `w:256/h:H/f:jpeg/q:80` with a
// new H >= 192 (1024x768 fits 256x192 in any such box, so the decode at
// 1/4, 256x192, is already the answer's size). Two connections, one
// transformation slot. Bare loop: JPEGDecoder at the DCT scale covering
// 256x256 (1/4), resample (none needed), JPEGEncoder q80. Result-cache
// hits: the last round's first 160 URLs again, 16 connections.
//
//     .build/release/ServeThroughput [rounds] [seconds per phase] [--validators] [--cache-parent PATH] [--served-only] [--smart-crop]
//
// `--smart-crop` measures `g:sm` instead: each round, the same work filled
// and cut to 256x256 at the centre and by the smart crop (`rs:fill:256:256`
// with and without `g:sm`, each request a new answer by its cache buster),
// in alternating order, and prints the smart crop's extra CPU time per
// answer and its rate against the centre cut.
//
// The origin sends no validator (the service then hashes each source);
// `--validators` gives every source an ETag and a Last-Modified, as most
// origins do. The cache folder is made under --cache-parent, by default
// /dev/shm like the DiskCache benchmarks': on this VM's ext4, which has no
// journal, creating a file among many deleted in the last minutes (a
// compiler's /tmp, or an earlier run's cache) is slowed by the kernel's
// `recently_deleted` scan, a cost of the VM's file system, not of imago
// (see docs/PERFORMANCE.md). The process prints what a DiskCache store
// costs beside the cache. `--served-only` skips the bare loop, for
// `perf record -p` of the server.
@main
enum ServeThroughput {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "serve" {
            // The child: everything that runs on core 0.
            try await ServeProcess.run(cacheParent: arguments.count > 1 ? arguments[1] : "/dev/shm", validators: arguments.contains("validators"))
            return
        }
        // The driver waits on pipes and child processes only; it runs off
        // the async main so that no synchronous call sits in an async function
        // (Swift 6.3.1 crashed compiling some inline in release).
        let options = DriverOptions(arguments)
        let outcome = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Result { try Driver(options: options).run() }) }
        }
        if case .failure(let error) = outcome {
            FileHandle.standardError.write(Data("ServeThroughput: \(error)\n".utf8))
            exit(1)
        }
    }
}

struct DriverOptions: Sendable {
    var rounds = 5
    var secondsPerPhase = 5
    var cacheParent = "/dev/shm"
    var servedOnly = false
    var validators = false
    var smartCrop = false

    init(_ arguments: [String]) {
        var numbers: [Int] = []
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--cache-parent" where index + 1 < arguments.count:
                cacheParent = arguments[index + 1]
                index += 1
            case "--served-only": servedOnly = true
            case "--validators": validators = true
            case "--smart-crop": smartCrop = true
            default: if let number = Int(arguments[index]) { numbers.append(number) }
            }
            index += 1
        }
        if numbers.count > 0 { rounds = max(1, min(numbers[0], 9)) }
        if numbers.count > 1 { secondsPerPhase = max(1, numbers[1]) }
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
}
