import CacheWorkloads
import Foundation
import Imago

/// One input size of the single-thread run: its photos, how many thumbnails
/// a round makes, the goal and what the issue measured on this machine.
struct ThroughputCase {
    let photos: PhotoSet
    let perRound: Int
    let goal: Double
    let reference: String
}

/// The time one thumbnail spends in each stage, in seconds.
struct StageTimes {
    var decode = 0.0
    var resample = 0.0
    var encode = 0.0
    var total: Double { decode + resample + encode }
}

/// Measures on the calling thread only, round after round, and prints the
/// median of each figure with the rounds next to it.
struct ThroughputRun {
    let rounds: Int

    func run(_ cases: [ThroughputCase]) throws {
        print(
            "Thumbnails: one thread, fit inside \(Thumbnail.box), JPEG q\(Thumbnail.encoder.quality) out; median of \(rounds) rounds after one warm-up round"
        )
        print("load average at start: \(ProcessStatus.loadAverage)")
        for item in cases { try measure(item) }
        print("load average at end: \(ProcessStatus.loadAverage)")
    }

    private func measure(_ item: ThroughputCase) throws {
        let photos = item.photos
        let name = photos.name
        try check(photos)
        print(
            String(
                format: "%@: %d distinct photo-like JPEGs (q85, detail %d, mean %.2f MB), %d thumbnails a round",
                name, photos.jpegs.count, photos.detail, photos.meanMegabytes, item.perRound))

        let thumbnails = try rates(count: item.perRound) { index in
            _ = try Thumbnail.make(from: photos.jpegs[index % photos.jpegs.count])
        }
        guard let turbo = BareTurboJPEG() else { throw CocoaError(.featureUnsupported) }
        let bare = try rates(count: item.perRound) { index in
            guard turbo.decodeEighth(photos.jpegs[index % photos.jpegs.count]) != nil else { throw CocoaError(.coderReadCorrupt) }
        }
        let stages = try stageTimes(photos, count: item.perRound)

        let rate = median(thumbnails.wall)
        let ceiling = median(bare.wall)
        let verdict = rate >= item.goal ? "met" : String(format: "MISSED by %.1f/s (%.0f%%)", item.goal - rate, 100 * (item.goal - rate) / item.goal)
        print(
            String(
                format: "  %@ thumbnail (decode n/8 + resample + encode q80): %6.1f/s   goal >= %.0f/s: %@   per CPU-second %.1f/s   [rounds %@]",
                name, rate, item.goal, verdict, median(thumbnails.cpu), list(thumbnails.wall)))
        print(
            String(
                format:
                    "  %@ TurboJPEG 1/8 decode alone (ceiling):          %6.1f/s   thumbnail at %.0f%% of it   per CPU-second %.1f/s   [rounds %@]",
                name, ceiling, 100 * rate / ceiling, median(bare.cpu), list(bare.wall)))
        print("  \(name) issue, same machine: \(item.reference)")

        let decode = median(stages.map(\.decode))
        let resample = median(stages.map(\.resample))
        let encode = median(stages.map(\.encode))
        let total = decode + resample + encode
        func share(_ value: Double) -> String { String(format: "%.2f ms (%.0f%%)", value * 1000, 100 * value / total) }
        let decoded = photos.jpegs.first.flatMap { try? JPEGDecoder().decode($0, options: Thumbnail.options) }
        let scaled = decoded.map { Thumbnail.options.scaled($0) }
        print(
            "  \(name) stages, CPU time per thumbnail: decode to \(decoded.map { "\($0.size)" } ?? "?") (JPEGDecoder) \(share(decode))"
                + " | resample to \(scaled.map { "\($0.size)" } ?? "?") (ImageResizer) \(share(resample))"
                + " | encode q80 \(share(encode)) | sum \(String(format: "%.2f ms", total * 1000))")
        try whatIf(photos, count: item.perRound, against: rate)
        let bareDecode = 1 / median(bare.cpu)
        print(
            String(
                format: "  %@ JPEGDecoder against bare TurboJPEG at 1/8, CPU time: %.2f ms against %.2f ms a decode",
                name, decode * 1000, bareDecode * 1000))
    }

    /// JPEGDecoder picks the scale that covers the box when filling it, also
    /// for `.fit`; fit needs less (1024x768 in 256x256: 1/4, exactly 256x192,
    /// instead of 3/8). Asking for the output size itself with `.fill` gets
    /// the scale fit needs, which shows what a fit-aware decoder would gain.
    private func whatIf(_ photos: PhotoSet, count: Int, against rate: Double) throws {
        let output = Thumbnail.options.outputSize(for: ImageSize(width: photos.width, height: photos.height))
        let fitScale = ImageDecodingOptions(targetSize: output, contentMode: .fill)
        guard let first = photos.jpegs.first, let decoded = try? JPEGDecoder().decode(first, options: fitScale),
            decoded.size != (try JPEGDecoder().decode(first, options: Thumbnail.options)).size
        else { return }
        let rates = try rates(count: count) { index in
            let image = try JPEGDecoder().decode(photos.jpegs[index % photos.jpegs.count], options: fitScale)
            _ = try Thumbnail.encoder.encode(fitScale.scaled(image))
        }
        print(
            String(
                format: "  %@ what-if, decoding at the scale fit needs (to %@, then resample if needed + encode q80): %.1f/s (%+.0f%%)"
                    + "   per CPU-second %.1f/s   [rounds %@]", photos.name, "\(decoded.size)", median(rates.wall),
                100 * (median(rates.wall) / rate - 1), median(rates.cpu), list(rates.wall)))
    }

    /// The rate of each round of `count` calls after a warm-up round, by the
    /// wall clock and by the thread's CPU time.
    private func rates(count: Int, _ body: (Int) throws -> Void) throws -> (wall: [Double], cpu: [Double]) {
        var wall: [Double] = []
        var cpu: [Double] = []
        for round in 0...rounds {
            let start = ContinuousClock.now
            let cpuStart = ThreadClock.now()
            for index in 0..<count { try body(index) }
            let cpuTime = ThreadClock.now() - cpuStart
            let wallTime = seconds(ContinuousClock.now - start)
            if round > 0 {
                wall.append(Double(count) / wallTime)
                cpu.append(Double(count) / cpuTime)
            }
        }
        return (wall, cpu)
    }

    /// The mean CPU time of each stage over `count` thumbnails, for each
    /// round after a warm-up round. Reading the clock costs well under a
    /// microsecond, far below the stages' milliseconds.
    private func stageTimes(_ photos: PhotoSet, count: Int) throws -> [StageTimes] {
        var times: [StageTimes] = []
        for round in 0...rounds {
            var sum = StageTimes()
            for index in 0..<count {
                let t0 = ThreadClock.now()
                let decoded = try JPEGDecoder().decode(photos.jpegs[index % photos.jpegs.count], options: Thumbnail.options)
                let t1 = ThreadClock.now()
                let scaled = Thumbnail.options.scaled(decoded)
                let t2 = ThreadClock.now()
                _ = try Thumbnail.encoder.encode(scaled)
                let t3 = ThreadClock.now()
                sum.decode += t1 - t0
                sum.resample += t2 - t1
                sum.encode += t3 - t2
            }
            if round > 0 {
                times.append(
                    StageTimes(decode: sum.decode / Double(count), resample: sum.resample / Double(count), encode: sum.encode / Double(count)))
            }
        }
        return times
    }

    /// Fails unless every photo makes a thumbnail of the size expected.
    private func check(_ photos: PhotoSet) throws {
        let expected = Thumbnail.options.outputSize(for: ImageSize(width: photos.width, height: photos.height))
        for jpeg in photos.jpegs {
            let thumbnail = try JPEGDecoder().decode(Thumbnail.make(from: jpeg), options: ImageDecodingOptions())
            guard thumbnail.size == expected else { throw CocoaError(.coderInvalidValue) }
        }
    }

    private func list(_ values: [Double]) -> String {
        values.map { String(format: "%.1f", $0) }.joined(separator: " ")
    }
}
