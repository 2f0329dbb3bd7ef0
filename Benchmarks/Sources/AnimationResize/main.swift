import CacheWorkloads
import Foundation
import Imago

// A 100-frame 480x270 GIF (a photo-like scene panning, one palette of
// its own a frame) resized to 240 pixels wide: Imago's pipeline (decode
// each frame, resample, encode a GIF) against `gifsicle --resize-width 240`
// (Debian's gifsicle, the tool thumbor shells out to), in alternating
// rounds in one run. Prints CPU time per animation, the peak memory of
// each (this process's, and gifsicle's largest), and each output's error
// against the source's frames resized without quantisation (FrameQuality).
//
//   swift run -c release AnimationResize [rounds] [animations per round]

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rounds = arguments.first ?? 5
let perRound = arguments.dropFirst().first ?? 3
let gifsicle = "/usr/bin/gifsicle"
guard FileManager.default.isExecutableFile(atPath: gifsicle) else {
    print("AnimationResize: \(gifsicle) is missing (apt-get install gifsicle)")
    exit(1)
}

let scene = try photoLikeImage(width: 960, height: 270, seed: 7, discs: 120, detail: 12)
let frames = (0..<100).map { index -> Image in
    let left = index * 4
    var pixels = [UInt8]()
    pixels.reserveCapacity(480 * 270 * 3)
    for row in 0..<270 {
        let start: Int = row * scene.bytesPerRow + left * 3
        pixels += scene.pixels[start..<(start + 480 * 3)]
    }
    return Image(width: 480, height: 270, pixelFormat: .rgb8, pixels: pixels)!
}
let source = try GIFEncoder().encode(frames: frames, durations: Array(repeating: 0.04, count: 100), loopCount: 0)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-animation-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let input = folder.appendingPathComponent("source.gif")
try source.write(to: input)
print("source: 100 frames of 480x270, \(source.count / 1024) KB")

func cpuSeconds(_ who: __rusage_who) -> Double {
    var usage = rusage()
    getrusage(who.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func maximumResidentMiB(_ who: __rusage_who) -> Double {
    var usage = rusage()
    getrusage(who.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

let pipeline = ImagePipeline(configuration: .init(dataCache: nil))
var request = ImageRequest(url: input, targetSize: ImageSize(width: 240, height: 135), contentMode: .fit)
request.priority = .high

/// CPU seconds per animation through Imago's pipeline, and the answer's size.
@MainActor func imago() async throws -> (Double, Int) {
    let start = cpuSeconds(RUSAGE_SELF)
    var size = 0
    for _ in 0..<perRound {
        size = try await pipeline.render(source, as: request, encodedWith: GIFEncoder(), animatingWith: GIFEncoder()).count
    }
    return ((cpuSeconds(RUSAGE_SELF) - start) / Double(perRound), size)
}

/// CPU seconds per animation through gifsicle.
func gifsicleRun() throws -> Double {
    let start = cpuSeconds(RUSAGE_CHILDREN)
    for index in 0..<perRound {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gifsicle)
        process.arguments = ["--resize-width", "240", input.path, "-o", folder.appendingPathComponent("out-\(index).gif").path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
    return (cpuSeconds(RUSAGE_CHILDREN) - start) / Double(perRound)
}

_ = try await imago()
_ = try gifsicleRun()
var imagoTimes: [Double] = []
var gifsicleTimes: [Double] = []
for round in 1...rounds {
    imagoTimes.append(try await imago().0)
    gifsicleTimes.append(try gifsicleRun())
    print(String(format: "round %d: Imago %.1f ms, gifsicle %.1f ms an animation", round, imagoTimes.last! * 1000, gifsicleTimes.last! * 1000))
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let (ours, theirs) = (median(imagoTimes), median(gifsicleTimes))
let output = try Data(contentsOf: folder.appendingPathComponent("out-0.gif"))
print(
    String(
        format: "median CPU an animation: Imago %.1f ms (%.2f/s), gifsicle %.1f ms (%.2f/s): Imago at %.2fx gifsicle's rate",
        ours * 1000, 1 / ours, theirs * 1000, 1 / theirs, theirs / ours
    )
)
let imagoOutput = try await pipeline.render(source, as: request, encodedWith: GIFEncoder(), animatingWith: GIFEncoder())
print("output: Imago \(imagoOutput.count / 1024) KB, gifsicle \(output.count / 1024) KB")

print(
    String(
        format: "peak RSS: this process %.1f MiB (source and pipeline included), gifsicle %.1f MiB", maximumResidentMiB(RUSAGE_SELF),
        maximumResidentMiB(RUSAGE_CHILDREN)
    )
)

/// An animation's frames as a viewer shows them.
func decodedFrames(_ data: Data) throws -> [Image] {
    let image = try GIFDecoder().decode(data, options: ImageDecodingOptions())
    guard let animation = image.animation else { return [image] }
    let pass = try animation.frames()
    var frames: [Image] = []
    while let frame = try pass.next() { frames.append(frame) }
    return frames
}
// The reference: the source's frames resized without quantisation.
let reference = try decodedFrames(source).map { ImageResizer.resize($0, to: ImageSize(width: 240, height: 135))! }
for (name, data) in [("Imago", imagoOutput), ("gifsicle", output)] {
    let quality = FrameQuality(try decodedFrames(data), against: reference)
    print(
        String(
            format: "\(name) against the unquantised resize: mean absolute error %.2f, PSNR %.2f dB, after a 3x3 blur %.2f, flicker %.2f",
            quality.meanAbsoluteError, quality.psnr, quality.blurredMeanAbsoluteError, quality.flicker
        )
    )
}
