import Foundation
import Imago

/// The floor of a thumbnail service: the JPEG files of a folder turned into
/// 256 px fits (JPEGDecoder at the DCT scale, resampled, encoded at quality
/// 80 in JPEG or WebP) on `threads` threads for `seconds`, with no HTTP, no
/// cache and no hand-off between threads. No server built on these codecs
/// can answer faster on the same cores: `thumbor-compare.sh` runs it beside
/// the servers to show how far a goal is from it.
///
/// Prints one line: `FLOOR <thumbnails> <seconds> <cpu seconds>`.
struct FloorRun {
    let folder: String
    let threads: Int
    let seconds: Int
    let webp: Bool

    func run() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jpg") }.sorted()
        let sources = try names.map { try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0)) }
        guard !sources.isEmpty else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: folder]) }
        let encoder: any ImageEncoding = webp ? WebPEncoder(quality: 80) : JPEGEncoder(quality: 80)
        let lock = NSLock()
        nonisolated(unsafe) var made = 0
        let deadline = ContinuousClock.now + .seconds(seconds)
        let cpuBefore = Self.cpuSeconds()
        let start = ContinuousClock.now
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var index = thread
            var count = 0
            while ContinuousClock.now < deadline {
                let source = sources[index % sources.count]
                guard let image = try? Thumbnail.options.scaled(JPEGDecoder().decode(source, options: Thumbnail.options)),
                    (try? encoder.encode(image)) != nil
                else { continue }
                count += 1
                index += threads
            }
            lock.withLock { made += count }
        }
        let elapsed = start.duration(to: .now)
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("FLOOR \(made) \(wall) \(Self.cpuSeconds() - cpuBefore)")
    }

    /// The process's user and system time so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
