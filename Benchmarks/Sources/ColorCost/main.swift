import CacheWorkloads
import Foundation
import Imago

// What converting colours to sRGB costs a cold answer's image work: the
// same 1024x768 photo-like JPEGs (quality 85) without a profile and with
// Adobe RGB's (Debian's libgs-common), each decoded for a 300x225 answer,
// resampled and encoded (JPEG quality 80) on this thread, in alternating
// rounds. Prints each round's CPU time per answer and the medians' ratio.
//
//   swift run -c release ColorCost [rounds] [answers per round]

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rounds = arguments.first ?? 7
let answers = arguments.dropFirst().first ?? 100
let profilePath = "/usr/share/color/icc/ghostscript/a98.icc"
guard let profile = FileManager.default.contents(atPath: profilePath) else {
    print("ColorCost: no profile at \(profilePath) (apt-get install libgs-common)")
    exit(1)
}

let images = try (0..<8).map { try photoLikeImage(width: 1024, height: 768, seed: UInt64(40 + $0), discs: 160, detail: 24) }
let plain = try images.map { try JPEGEncoder(quality: 85).encode($0) }
let profiled = try images.map { try JPEGEncoder(quality: 85, metadata: ImageMetadata(iccProfile: profile)).encode($0) }
print("sources: 8 photo-like 1024x768 JPEGs, \(plain.map(\.count).reduce(0, +) / 8 / 1024) KB on average; profile \(profilePath)")

func threadCPUTime() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// CPU milliseconds per answer over `answers` answers from `sources`.
func measure(_ sources: [Data]) throws -> Double {
    let options = ImageDecodingOptions(targetSize: ImageSize(width: 300, height: 225), contentMode: .fill)
    let encoder = JPEGEncoder(quality: 80)
    let start = threadCPUTime()
    for index in 0..<answers {
        let decoded = try JPEGDecoder().decode(sources[index % sources.count], options: options)
        let resized = ImageResizer.resize(decoded, to: options.outputSize(for: decoded.size)) ?? decoded
        _ = try encoder.encode(resized)
    }
    return (threadCPUTime() - start) * 1000 / Double(answers)
}

_ = try measure(plain)
_ = try measure(profiled)
var plainTimes: [Double] = []
var profiledTimes: [Double] = []
for round in 1...rounds {
    plainTimes.append(try measure(plain))
    profiledTimes.append(try measure(profiled))
    print(String(format: "round %d: no profile %.3f ms, Adobe RGB %.3f ms an answer", round, plainTimes.last!, profiledTimes.last!))
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let (without, with) = (median(plainTimes), median(profiledTimes))
print(
    String(
        format: "median CPU an answer: no profile %.3f ms, Adobe RGB %.3f ms: the conversion costs %.3f ms, %.1f%% of the image work",
        without, with, with - without, (with - without) / without * 100
    )
)
