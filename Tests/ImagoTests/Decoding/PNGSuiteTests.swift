import Foundation
import Testing

@testable import Imago
@testable import ImagoCodecs

/// PngSuite (../shared/corpus/pngsuite): every valid file must decode to its
/// reference pixels, every `x*` file must be rejected with an error. The
/// corpus is not in this repository; where it cannot be found the suite is
/// skipped, and the test log says so.
@Suite(
    "PNG conformance: PngSuite", .enabled(if: PNGSuiteCorpus.root != nil, "PngSuite corpus not found next to the project (../shared/corpus/pngsuite)")
)
struct PNGSuiteTests {
    static var root: String? { PNGSuiteCorpus.root }

    static var files: [String] {
        guard let root else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: root + "/png")) ?? []).filter { $0.hasSuffix(".png") }.sorted()
    }

    static func path(_ relative: String) -> String { (root ?? "") + "/" + relative }

    @Test("the corpus is complete")
    func corpusComplete() {
        #expect(Self.files.count == 175)
    }

    @Test("valid files decode to the reference pixels", arguments: files.filter { !$0.hasPrefix("x") })
    func validFile(name: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.path("png/" + name)))
        // The references are the samples as stored; most of the suite says
        // gAMA 1.0, which a decode converting to sRGB lifts (checked in
        // DeclaredColorSpaceTests).
        let image = try PNGDecoder().decode(data, options: ImageDecodingOptions(convertsToSRGB: false))
        let base = String(name.dropLast(4))
        let json = FileManager.default.fileExists(atPath: Self.path("json/\(base)_to8.json")) ? "\(base)_to8" : base
        var expected = try JSONDecoder().decode([Int].self, from: Data(contentsOf: URL(fileURLWithPath: Self.path("json/\(json).json"))))
        // A few 16-bit files have only 16-bit references: reduce them the way a decoder does.
        let sixteenBit = json.hasSuffix("_to8") || expected.contains { $0 > 255 }
        if expected.contains(where: { $0 > 255 }) { expected = expected.map { ($0 * 255 + 32767) / 65535 } }
        let actual = rgba(image)
        try #require(actual.count == expected.count, "\(name): \(actual.count / 4) pixels decoded, \(expected.count / 4) expected")
        var worst = 0
        for pixel in 0..<(actual.count / 4) {
            let alpha = pixel * 4 + 3
            // The colour under a fully transparent pixel is invisible and writers differ on it.
            let channels = expected[alpha] == 0 && actual[alpha] == 0 ? [3] : [0, 1, 2, 3]
            for channel in channels {
                worst = max(worst, abs(Int(actual[pixel * 4 + channel]) - expected[pixel * 4 + channel]))
            }
        }
        // 16-bit samples reduced to 8 bits may round either way.
        #expect(worst <= (sixteenBit ? 1 : 0), "\(name): largest difference \(worst)")
    }

    @Test("corrupt files are rejected with an error, never a crash", arguments: files.filter { $0.hasPrefix("x") })
    func corruptFile(name: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.path("png/" + name)))
        #expect(throws: ImageDecodingError.self, "\(name)") {
            _ = try ImagePipeline.decode(data, options: ImageDecodingOptions(), decoders: [PNGDecoder()])
        }
    }

    /// The image as RGBA8 bytes.
    private func rgba(_ image: Image) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(image.width * image.height * 4)
        let channels = image.pixelFormat.bytesPerPixel
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = y * image.bytesPerRow + x * channels
                switch image.pixelFormat {
                case .gray8: result += [image.pixels[p], image.pixels[p], image.pixels[p], 255]
                case .grayAlpha8: result += [image.pixels[p], image.pixels[p], image.pixels[p], image.pixels[p + 1]]
                case .rgb8: result += [image.pixels[p], image.pixels[p + 1], image.pixels[p + 2], 255]
                case .rgba8: result += image.pixels[p..<(p + 4)]
                }
            }
        }
        return result
    }
}

/// Where the PngSuite corpus is: `IMAGO_PNGSUITE`, else next to the project.
enum PNGSuiteCorpus {
    static let root: String? = {
        // Tests/ImagoTests/Decoding/PNGSuiteTests.swift -> the project root -> ../shared/corpus/pngsuite
        let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["IMAGO_PNGSUITE"],
            project.deletingLastPathComponent().appendingPathComponent("shared/corpus/pngsuite").path,
            "/work/shared/corpus/pngsuite",
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0 + "/png/basn0g01.png") }
    }()
}
