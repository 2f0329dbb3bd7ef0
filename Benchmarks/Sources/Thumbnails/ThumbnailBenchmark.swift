import Foundation

// Thumbnail speed and memory, the figures the issue asks for.
//
// Default: on one thread, the rate of whole thumbnails (JPEGDecoder at the
// smallest n/8 scale that covers 256x256, resampled to fit exactly, JPEG
// quality 80) against TurboJPEG alone decoding at 1/8 (the ceiling), for
// 4000x3000 and 1024x768 photo-like JPEGs at quality 85, with the time of
// each stage. Rates are by the wall clock, and per CPU-second of the thread
// (which holds up better while other processes share the machine).
//
//     swift run -c release Thumbnails [--rounds 5] [--detail 72]
//
// --memory: the peak resident set while 1,000 distinct 4000x3000 JPEGs load
// through an ImagePipeline as 256 px thumbnails (see MemoryRun).
//
//     swift run -c release Thumbnails --memory [--count 1000] [--in-flight 16] [--bases 8]
//
// --memory --png: the peak resident set above the baseline while 9000x9000
// PNGs load as 256 px thumbnails, their rows streamed (see PNGMemoryRun).
//
//     swift run -c release Thumbnails --memory --png [--whole] [--count 20] [--in-flight 2]
//
// --floor FOLDER: the 256 px fits of that folder's JPEGs on all cores, with
// nothing of a server (see FloorRun); thumbor-compare.sh runs it.
//
//     swift run -c release Thumbnails --floor FOLDER [--threads 2] [--seconds 8] [--webp]

/// The integer after `flag` on the command line, or `fallback`.
func option(_ flag: String, default fallback: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count, let value = Int(arguments[index + 1]), value > 0 else {
        return fallback
    }
    return value
}

/// The entry point. An `@main` type whose async part only dispatches: with
/// the synchronous work inline in an async function (top-level code in
/// main.swift included), Swift 6.3.1 crashed in release builds while
/// "splitting coroutine".
@main
enum ThumbnailBenchmark {
    static func main() async throws {
        if let index = CommandLine.arguments.firstIndex(of: "--floor"), index + 1 < CommandLine.arguments.count {
            try FloorRun(
                folder: CommandLine.arguments[index + 1], threads: option("--threads", default: ProcessInfo.processInfo.activeProcessorCount),
                seconds: option("--seconds", default: 8), webp: CommandLine.arguments.contains("--webp")
            ).run()
        } else if CommandLine.arguments.contains("--memory"), CommandLine.arguments.contains("--png") {
            try await PNGMemoryRun(
                count: option("--count", default: 20), inFlight: option("--in-flight", default: 2), whole: CommandLine.arguments.contains("--whole")
            ).run()
        } else if CommandLine.arguments.contains("--memory") {
            let run = MemoryRun(
                count: option("--count", default: 1_000), inFlight: option("--in-flight", default: 16), baseCount: option("--bases", default: 8))
            try await run.run()
        } else {
            try throughput()
        }
    }

    static func throughput() throws {
        let detail = option("--detail", default: PhotoSet.defaultDetail)
        let large = try PhotoSet(width: 4000, height: 3000, count: 8, detail: detail)
        let small = try PhotoSet(width: 1024, height: 768, count: 16, firstSeed: 100, detail: detail)
        try ThroughputRun(rounds: option("--rounds", default: 5)).run([
            ThroughputCase(photos: large, perRound: 40, goal: 20, reference: "Pillow 13 17/s, vipsthumbnail 8.14 11/s, TurboJPEG 1/8 decode 23/s"),
            ThroughputCase(
                photos: small, perRound: 400, goal: 200, reference: "Pillow 13 121/s, vipsthumbnail 8.14 65/s, TurboJPEG 1/8 decode 307/s"),
        ])
    }
}
