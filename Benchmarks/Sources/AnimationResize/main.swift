import CacheWorkloads
import Foundation
import Imago

// A 100-frame 480x270 GIF (a photo-like scene panning 4 pixels a frame)
// resized to 240 pixels wide: Imago's pipeline (decode each frame,
// resample, encode a GIF) against `gifsicle --resize-width 240` (Debian's
// gifsicle, the tool thumbor shells out to), in alternating rounds in one
// run, for two sources: one colour table for all frames (as most tools
// write GIFs) and one table a frame. The sources are made by
// SourceAnimation, not by Imago's encoder. Prints CPU time per animation,
// the peak memory of each (this process's while Imago works, and
// gifsicle's largest), and each output's error against the source's
// frames resized without quantisation (FrameQuality).
//
//   swift run -c release AnimationResize [rounds] [animations per round] [--imago-only]
//
// With --imago-only, only Imago's rounds run and no quality is measured:
// for a profiler.

let arguments = CommandLine.arguments.dropFirst()
let numbers = arguments.compactMap { Int($0) }
let rounds = numbers.first ?? 5
let perRound = numbers.dropFirst().first ?? 3
let imagoOnly = arguments.contains("--imago-only")
let gifsicle = "/usr/bin/gifsicle"
guard FileManager.default.isExecutableFile(atPath: gifsicle) else {
    print("AnimationResize: \(gifsicle) is missing (apt-get install gifsicle)")
    exit(1)
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-animation-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

/// The sources, made from one scene; its frames are let go before measuring.
func makeSources() throws -> [(palettes: SourceAnimation.Palettes, data: Data)] {
    let scene = try photoLikeImage(width: 960, height: 270, seed: 7, discs: 120, detail: 12)
    let frames = (0..<100).map { index -> RGBFrame in
        let left = index * 4
        let pixels = (0..<(480 * 270)).map { position -> UInt32 in
            let base = (position / 480) * scene.bytesPerRow + (left + position % 480) * 3
            return RGBFrame.pack(scene.pixels[base], scene.pixels[base + 1], scene.pixels[base + 2])
        }
        return RGBFrame(width: 480, height: 270, pixels: pixels)
    }
    return try SourceAnimation.Palettes.allCases.map { palettes in
        (palettes, try SourceAnimation.gif(frames, palettes: palettes, delay: 4, gifsicle: gifsicle, in: folder))
    }
}
let sources = try makeSources()

/// Gives freed pages back to the system (glibc's malloc_trim, which the
/// Glibc module does not declare), so that the peak read while Imago works
/// is not that of what the harness held before.
func releaseFreedMemory() {
    guard let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// A field of /proc/self/status in MiB (VmRSS: now; VmHWM: the peak since
/// the last ``resetPeakResident()``).
func residentMiB(_ field: String) -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
}

/// Makes VmHWM the current RSS (Linux's clear_refs 5), so that the next
/// peak read is that of the work after this call.
func resetPeakResident() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

let pipeline = ImagePipeline(configuration: .init(dataCache: nil))

/// An animation's frames as a viewer shows them.
func decodedFrames(_ data: Data) throws -> [Image] {
    let image = try GIFDecoder().decode(data, options: ImageDecodingOptions())
    guard let animation = image.animation else { return [image] }
    let pass = try animation.frames()
    var frames: [Image] = []
    while let frame = try pass.next() { frames.append(frame) }
    return frames
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Resizes `source` (`palettes`) by both, alternately, and prints the figures.
@MainActor func measure(_ source: Data, _ palettes: SourceAnimation.Palettes) async throws {
    let input = folder.appendingPathComponent("input-\(palettes).gif")
    try source.write(to: input)
    let info = try String(decoding: pipeOutput(gifsicle, ["--info", input.path]), as: UTF8.self)
    let localTables = info.components(separatedBy: "local color table").count - 1
    print("source (\(palettes) palette): 100 frames of 480x270, \(source.count / 1024) KB, \(localTables) local colour tables")
    var request = ImageRequest(url: input, targetSize: ImageSize(width: 240, height: 135), contentMode: .fit)
    request.priority = .high
    let output = folder.appendingPathComponent("output-\(palettes).gif")

    /// CPU seconds per animation through Imago's pipeline.
    func imago() async throws -> Double {
        let start = cpuSeconds()
        for _ in 0..<perRound {
            _ = try await pipeline.render(source, as: request, encodedWith: GIFEncoder(), animatingWith: GIFEncoder())
        }
        return (cpuSeconds() - start) / Double(perRound)
    }
    let resize = ["--resize-width", "240", input.path, "-o", output.path]
    /// CPU seconds per animation through gifsicle.
    func gifsicleRun() throws -> Double {
        try (0..<perRound).map { _ in try ChildProcess.run(gifsicle, resize).cpuSeconds }.reduce(0, +) / Double(perRound)
    }

    releaseFreedMemory()
    let before = residentMiB("VmRSS")
    resetPeakResident()
    _ = try await imago()
    if !imagoOnly { _ = try gifsicleRun() }
    var (imagoTimes, gifsicleTimes) = ([Double](), [Double]())
    for round in 1...rounds {
        imagoTimes.append(try await imago())
        guard !imagoOnly else {
            print(String(format: "  round %d: Imago %.1f ms an animation", round, imagoTimes.last! * 1000))
            continue
        }
        let time = try gifsicleRun()
        gifsicleTimes.append(time)
        print(String(format: "  round %d: Imago %.1f ms, gifsicle %.1f ms an animation", round, imagoTimes.last! * 1000, time * 1000))
    }
    let peak = residentMiB("VmHWM")
    guard !imagoOnly else {
        print(String(format: "  median CPU an animation: Imago %.1f ms", median(imagoTimes) * 1000))
        try printStages(source)
        return
    }
    let (ours, theirs) = (median(imagoTimes), median(gifsicleTimes))
    let gifsiclePeak = try ChildProcess.peakResidentMiB(gifsicle, resize, in: folder)
    print(
        String(
            format: "  median CPU an animation: Imago %.1f ms (%.2f/s), gifsicle %.1f ms (%.2f/s): Imago at %.2fx gifsicle's rate",
            ours * 1000, 1 / ours, theirs * 1000, 1 / theirs, theirs / ours
        )
    )
    print(
        String(
            format: "  peak RSS: this process %.1f MiB while Imago worked (%.1f MiB before: the sources and the harness), gifsicle %.1f MiB",
            peak, before, gifsiclePeak
        )
    )
    try printStages(source)
    let imagoOutput = try await pipeline.render(source, as: request, encodedWith: GIFEncoder(), animatingWith: GIFEncoder())
    let gifsicleOutput = try Data(contentsOf: output)
    print("  output: Imago \(imagoOutput.count / 1024) KB, gifsicle \(gifsicleOutput.count / 1024) KB")
    outputs.append((palettes, source, imagoOutput, gifsicleOutput))
}

/// Prints where Imago's time goes, each stage timed on its own (median CPU
/// of 3 runs): decoding the frames, decoding them at 240x135 (resampling
/// included), and encoding the resized frames.
func printStages(_ source: Data) throws {
    func timed(_ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        for _ in 0..<3 {
            let start = cpuSeconds()
            try body()
            times.append(cpuSeconds() - start)
        }
        return median(times) * 1000
    }
    func frames(_ options: ImageDecodingOptions) throws -> [Image] {
        let first = try GIFDecoder().decode(source, options: options)
        let pass = try first.animation!.frames()
        var frames: [Image] = []
        while let frame = try pass.next() { frames.append(frame) }
        return frames
    }
    func decode(_ options: ImageDecodingOptions) throws {
        let pass = try GIFDecoder().decode(source, options: options).animation!.frames()
        while try pass.next() != nil {}
    }
    let small = ImageDecodingOptions(targetSize: ImageSize(width: 240, height: 135), contentMode: .fit)
    let decoding = try timed { try decode(ImageDecodingOptions()) }
    let resizing = try timed { try decode(small) }
    let resized = try frames(small)
    let durations = Array(repeating: 0.04, count: resized.count)
    let encoding = try timed { _ = try GIFEncoder().encode(frames: resized, durations: durations, loopCount: 0) }
    print(
        String(
            format: "  Imago's stages, each on its own: decode %.1f ms, decode and resample %.1f ms, encode %.1f ms an animation",
            decoding, resizing, encoding
        )
    )
}

/// Each source and its two resized outputs, for the quality measured after
/// all timing, so that its memory is not in the peaks above.
var outputs: [(palettes: SourceAnimation.Palettes, source: Data, imago: Data, gifsicle: Data)] = []

/// Prints each output's error against the source's frames resized without quantisation.
func printQuality(palettes: SourceAnimation.Palettes, source: Data, imago: Data, gifsicle: Data) throws {
    print("quality (\(palettes) palette):")
    let reference = try decodedFrames(source).map { ImageResizer.resize($0, to: ImageSize(width: 240, height: 135))! }
    for (name, data) in [("Imago", imago), ("gifsicle", gifsicle)] {
        let quality = FrameQuality(try decodedFrames(data), against: reference)
        print(
            String(
                format: "  \(name) against the unquantised resize: mean absolute error %.2f, PSNR %.2f dB, after a 3x3 blur %.2f, flicker %.2f",
                quality.meanAbsoluteError, quality.psnr, quality.blurredMeanAbsoluteError, quality.flicker
            )
        )
    }
}

/// What `executable` prints on its standard output.
func pipeOutput(_ executable: String, _ arguments: [String]) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return data
}

for (palettes, data) in sources {
    try await measure(data, palettes)
}
for output in outputs {
    try printQuality(palettes: output.palettes, source: output.source, imago: output.imago, gifsicle: output.gifsicle)
}
