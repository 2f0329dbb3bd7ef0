import Foundation
import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("GIF encoder, animations of many colours: one palette shared by the frames, a new one for a new scene, stable where nothing changes")
struct GIFEncoderPaletteTests {
    let options = ImageDecodingOptions()

    /// 96x64 RGB frames of a smooth picture twice as wide, panning `step`
    /// pixels a frame: thousands of colours, nearly the same in every frame.
    static func panning(frameCount: Int, step: Int = 1) -> [Image] {
        (0..<frameCount).map { index in
            PixelFixtures.image(
                96, 64, .rgb8,
                (0..<(96 * 64)).map { position in
                    let (x, y) = (position % 96 + index * step, position / 96)
                    return [UInt8(x * 255 / 191), UInt8(y * 4), UInt8((x / 2 + y * 3) % 256)]
                })
        }
    }

    /// 96x64 RGB frames whose pixel at (x, y) is `color(frame, x, y)`.
    static func frames(_ frameCount: Int, _ color: (Int, Int, Int) -> [UInt8]) -> [Image] {
        (0..<frameCount).map { frame in PixelFixtures.image(96, 64, .rgb8, (0..<(96 * 64)).map { color(frame, $0 % 96, $0 / 96) }) }
    }

    /// How many frames of a GIF have a colour table of their own, as gifsicle reads it.
    static func localColorTables(_ data: Data) throws -> Int {
        let info = try CommandLineTool.gifsicle.output(["--info"], on: data, fileExtension: "gif")
        return info.components(separatedBy: "local color table").count - 1
    }

    /// Checks that each decoded frame is close to the one written: per pixel
    /// (dithering's grain) and in 4x4 averages (colour shifts).
    static func expectClose(_ decoded: [Image], _ frames: [Image], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(decoded.count == frames.count, sourceLocation: sourceLocation)
        for (index, (actual, expected)) in zip(decoded, frames).enumerated() {
            let error = AnimationSamples.meanColorError(actual, expected)
            #expect(error < 5, "frame \(index): mean error \(error)", sourceLocation: sourceLocation)
            let blockError = AnimationSamples.meanColorError(GIFEncoderTests.blockAverages(actual), GIFEncoderTests.blockAverages(expected))
            #expect(blockError < 1, "frame \(index): mean error of 4x4 averages \(blockError)", sourceLocation: sourceLocation)
        }
    }

    @Test("a panning photo shares the first frame's palette: later frames have no colour table of their own, and stay close")
    func sharedPalette() throws {
        // Given frames of a picture panning a pixel a frame
        let frames = Self.panning(frameCount: 6)
        // When written and read back
        let data = try GIFEncoder().encode(frames: frames, durations: Array(repeating: 0.05, count: 6), loopCount: 0)
        let decoded = try AnimationSamples.frames(of: try GIFDecoder().decode(data, options: options))
        // Then every frame uses the global table, and each is close
        #expect(try Self.localColorTables(data) == 0)
        Self.expectClose(decoded, frames)
    }

    @Test("a new scene, of colours the shared palette lacks, gets a palette of its own, which the frame after it shares")
    func newScene() throws {
        // Given two frames of greys, then two of reds and greens
        let grays = Self.frames(2) { frame, x, y in
            let value = UInt8((x + frame) * 255 / 100)
            return [value, value, value &+ UInt8(y % 4)]
        }
        let colors = Self.frames(2) { frame, x, y in [UInt8((x + frame) * 255 / 100), UInt8(y * 4), 20] }
        let frames = grays + colors
        // When written and read back
        let data = try GIFEncoder().encode(frames: frames, durations: Array(repeating: 0.05, count: 4), loopCount: 0)
        let decoded = try AnimationSamples.frames(of: try GIFDecoder().decode(data, options: options))
        // Then the last two frames have a table of their own (the same one:
        // GIF has one global table only), and every frame is close
        #expect(try Self.localColorTables(data) == 2)
        Self.expectClose(decoded, frames)
    }

    @Test("a transparent band moving over a photo stays transparent, and nothing else is, through mapped palettes")
    func transparency() throws {
        // Given panning frames with a transparent band 8 pixels wide moving right
        let frames = Self.panning(frameCount: 4).enumerated().map { index, frame in
            let pixels = (0..<(frame.width * frame.height)).map { position -> [UInt8] in
                let rgb = PixelFixtures.rgba(frame, position % frame.width, position / frame.width).prefix(3)
                return (index * 8..<index * 8 + 8).contains(position % frame.width) ? [0, 0, 0, 0] : Array(rgb) + [255]
            }
            return PixelFixtures.image(frame.width, frame.height, .rgba8, pixels)
        }
        // When written and read back
        let data = try GIFEncoder().encode(frames: frames, durations: Array(repeating: 0.05, count: 4), loopCount: 0)
        let decoded = try AnimationSamples.frames(of: try GIFDecoder().decode(data, options: options))
        // Then the band is transparent in every frame and nothing else is,
        // and the colours stay close
        #expect(decoded.count == 4)
        for (index, (actual, expected)) in zip(decoded, frames).enumerated() {
            var (alphaMismatches, colorError, opaqueCount) = (0, 0, 0)
            for y in 0..<expected.height {
                for x in 0..<expected.width {
                    let (a, e) = (PixelFixtures.rgba(actual, x, y), PixelFixtures.rgba(expected, x, y))
                    if a[3] != e[3] { alphaMismatches += 1 }
                    guard e[3] == 255 else { continue }
                    colorError += (0..<3).reduce(0) { $0 + abs(Int(a[$1]) - Int(e[$1])) }
                    opaqueCount += 3
                }
            }
            #expect(alphaMismatches == 0, "frame \(index)")
            #expect(Double(colorError) / Double(opaqueCount) < 5, "frame \(index)")
        }
    }

    @Test("stable: a frame like the one before it shows the same pixels; a still area shows the same pixels in every frame")
    func stability() throws {
        // Given panning frames whose bottom half is the first frame's, still,
        // with the third frame a copy of the second
        let panning = Self.panning(frameCount: 4, step: 2)
        var frames = panning.map { frame in
            PixelFixtures.image(
                96, 64, .rgb8,
                (0..<(96 * 64)).map { position in
                    let (x, y) = (position % 96, position / 96)
                    return Array(PixelFixtures.rgba(y < 32 ? frame : panning[0], x, y).prefix(3))
                })
        }
        frames[2] = frames[1]
        // When written and read back
        let data = try GIFEncoder().encode(frames: frames, durations: Array(repeating: 0.05, count: 4), loopCount: 0)
        let decoded = try AnimationSamples.frames(of: try GIFDecoder().decode(data, options: options))
        // Then the copy decodes to the same pixels as the frame before it,
        // every frame's bottom half is the first's, byte for byte, and the
        // frames after the first cover the top half only (the copy: one pixel)
        #expect(decoded.count == 4)
        /// How many bytes differ between two frames' rows from `firstRow` on.
        func differences(_ a: Image, _ b: Image, from firstRow: Int = 0) -> Int {
            zip(a.pixels, b.pixels).dropFirst(a.bytesPerRow * firstRow).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) }
        }
        #expect(differences(decoded[2], decoded[1]) == 0)
        for index in 1..<4 { #expect(differences(decoded[index], decoded[0], from: 32) == 0, "frame \(index)") }
        let info = try CommandLineTool.gifsicle.output(["--info"], on: data, fileExtension: "gif")
        #expect(info.contains("+ image #1 96x32\n"), "\(info)")
        #expect(info.contains("+ image #2 1x1 "), "\(info)")
        #expect(info.contains("+ image #3 96x32\n"), "\(info)")
        Self.expectClose(decoded, frames)
    }
}
