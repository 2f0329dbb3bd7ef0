import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("GIF: palettes, transparency, interlacing, animation and disposal, limits, damaged input")
struct GIFDecoderTests {
    let options = ImageDecodingOptions()
    /// Index 0 black, 1 red, 2 green, 3 blue.
    let palette: [(UInt8, UInt8, UInt8)] = [(0, 0, 0), (255, 0, 0), (0, 255, 0), (0, 0, 255)]
    static let transparent: [UInt8] = [0, 0, 0, 0]
    static let red: [UInt8] = [255, 0, 0, 255]
    static let green: [UInt8] = [0, 255, 0, 255]
    static let blue: [UInt8] = [0, 0, 255, 255]

    func frame(_ index: UInt8, left: Int = 0, top: Int = 0, width: Int = 8, height: Int = 8) -> FormatFixtures.GIFFrame {
        FormatFixtures.GIFFrame(left: left, top: top, width: width, height: height, indices: [UInt8](repeating: index, count: width * height))
    }

    @Test("a still GIF decodes to its palette colours, interlaced or not, with transparency")
    func still() throws {
        let width = 13
        let height = 11
        let indices = (0..<(width * height)).map { UInt8(($0 / width + $0 % width) % 4) }
        var plain = FormatFixtures.GIFFrame(width: width, height: height, indices: indices)
        plain.transparentIndex = 0
        var interlaced = plain
        interlaced.interlaced = true
        for frame in [plain, interlaced] {
            let data = try FormatFixtures.gif(width: width, height: height, palette: palette, frames: [frame])
            #expect(ImageFormat(sniffing: data) == .gif)
            let image = try GIFDecoder().decode(data, options: options)
            #expect(image.size == ImageSize(width: width, height: height))
            #expect(image.animation == nil)
            for y in 0..<height {
                for x in 0..<width {
                    let expected = [Self.transparent, Self.red, Self.green, Self.blue][(x + y) % 4]
                    #expect(FormatFixtures.rgba(image, x: x, y: y) == expected, "(\(x), \(y)) interlaced: \(frame.interlaced)")
                }
            }
        }
    }

    @Test("frames are composited: partial frames, transparency, and disposal to background and to previous")
    func composition() throws {
        let first = frame(1)  // all red, kept
        var second = frame(2, left: 2, top: 2, width: 4, height: 4)  // green square, then restored
        second.disposal = 3
        var third = frame(3, left: 0, top: 0, width: 2, height: 2)  // blue corner, then cleared
        third.disposal = 2
        var fourth = frame(0, left: 6, top: 6, width: 2, height: 2)  // transparent index: draws nothing
        fourth.transparentIndex = 0
        let data = try FormatFixtures.gif(width: 8, height: 8, palette: palette, frames: [first, second, third, fourth], loopCount: 0)
        let image = try GIFDecoder().decode(data, options: options)
        let animation = try #require(image.animation)
        #expect(animation.frameCount == 4)
        #expect(animation.loopCount == 0)
        let pass = try animation.frames()
        var frames: [Image] = []
        while let next = try pass.next() { frames.append(next) }
        #expect(frames.count == 4)
        #expect(frames[0].pixels == image.pixels)
        #expect(FormatFixtures.rgba(frames[0], x: 3, y: 3) == Self.red)
        #expect(FormatFixtures.rgba(frames[1], x: 3, y: 3) == Self.green)
        #expect(FormatFixtures.rgba(frames[1], x: 0, y: 0) == Self.red)
        // The green square was restored to what was under it (red) before the third frame.
        #expect(FormatFixtures.rgba(frames[2], x: 3, y: 3) == Self.red)
        #expect(FormatFixtures.rgba(frames[2], x: 1, y: 1) == Self.blue)
        // The blue corner was cleared to transparent; the transparent frame drew nothing.
        #expect(FormatFixtures.rgba(frames[3], x: 1, y: 1) == Self.transparent)
        #expect(FormatFixtures.rgba(frames[3], x: 7, y: 7) == Self.red)
    }

    @Test("delays, loop counts, and the browsers' 100 ms for delays of 10 ms or less")
    func timing() throws {
        var frames = [frame(1), frame(2), frame(3)]
        frames[0].delayCentiseconds = 25
        frames[1].delayCentiseconds = 0
        frames[2].delayCentiseconds = 1
        let looping = try GIFDecoder().decode(
            try FormatFixtures.gif(width: 8, height: 8, palette: palette, frames: frames, loopCount: 5), options: options)
        #expect(looping.animation?.frameDurations == [0.25, 0.1, 0.1])
        // NETSCAPE2.0's 5 repeats the animation 5 times after the first play, as browsers read it.
        #expect(looping.animation?.loopCount == 6)
        let once = try GIFDecoder().decode(try FormatFixtures.gif(width: 8, height: 8, palette: palette, frames: frames), options: options)
        #expect(once.animation?.loopCount == 1)
    }

    @Test("frames reaching outside the screen are clipped")
    func clipping() throws {
        let data = try FormatFixtures.gif(
            width: 8, height: 8, palette: palette, frames: [frame(1), frame(3, left: 6, top: 5, width: 10, height: 10)])
        let image = try GIFDecoder().decode(data, options: options)
        let pass = try #require(image.animation).frames()
        _ = try pass.next()
        let second = try #require(try pass.next())
        #expect(second.size == ImageSize(width: 8, height: 8))
        #expect(FormatFixtures.rgba(second, x: 7, y: 7) == Self.blue)
        #expect(FormatFixtures.rgba(second, x: 5, y: 7) == Self.red)
    }

    @Test("a truncated animation keeps its whole frames; a truncated first frame is an error")
    func truncation() throws {
        let full = try FormatFixtures.gif(width: 8, height: 8, palette: palette, frames: [frame(1), frame(2), frame(3)])
        let single = try FormatFixtures.gif(width: 8, height: 8, palette: palette, frames: [frame(1)])
        // Cut inside the third frame: the first two stay.
        let cut = full.prefix(full.count - 6)
        let image = try GIFDecoder().decode(cut, options: options)
        #expect(image.animation?.frameCount == 2)
        for length in 0..<(single.count - 1) {
            #expect(throws: ImageDecodingError.self, "\(length) bytes") { try GIFDecoder().decode(single.prefix(length), options: options) }
        }
    }

    @Test("a screen declaring 60000x60000 is refused at once; so are too many frames")
    func limits() throws {
        var header = Data("GIF89a".utf8)
        header.append(contentsOf: [0x60, 0xEA, 0x60, 0xEA, 0x00, 0x00, 0x00, 0x3B])
        let error = #expect(throws: ImageDecodingError.self) { try GIFDecoder().decode(header, options: options) }
        #expect(error?.code == .tooManyPixels(width: 60000, height: 60000, limit: 100_000_000))

        let many = try FormatFixtures.gif(
            width: 2, height: 2, palette: palette, frames: (0..<30).map { self.frame(UInt8($0 % 4), width: 2, height: 2) })
        let tooMany = #expect(throws: ImageDecodingError.self) {
            try GIFDecoder().decode(many, options: ImageDecodingOptions(maximumFrameCount: 20))
        }
        #expect(tooMany?.code == .tooManyFrames(count: 21, limit: 20))
    }

    @Test("bit-flipped GIFs give an image of the screen they declare, every frame that size, or a GIF decoding error")
    func damagedInput() throws {
        let data = try FormatFixtures.gif(
            width: 16, height: 16, palette: palette, frames: [frame(1, width: 16, height: 16), frame(2, left: 4, top: 4)], loopCount: 0)
        var generator = SeededGenerator(seed: 11)
        var decoded = 0
        var rejected = 0
        for _ in 0..<500 {
            var damaged = data
            for _ in 0..<3 {
                let index = Int.random(in: 6..<damaged.count, using: &generator)
                damaged[index] = UInt8.random(in: 0...255, using: &generator)
            }
            // The logical screen, little-endian after "GIF89a": the canvas every frame is drawn on.
            let screen = ImageSize(width: Int(damaged[6]) | Int(damaged[7]) << 8, height: Int(damaged[8]) | Int(damaged[9]) << 8)
            do {
                let image = try GIFDecoder().decode(damaged, options: options)
                decoded += 1
                #expect(image.size == screen)
                guard let animation = image.animation else { continue }
                #expect(animation.frameSize == screen)
                // A later frame may be the damaged one: the frames before it are whole.
                let pass = try? animation.frames()
                while let frame = try? pass?.next() {
                    #expect(frame.size == screen)
                }
            } catch {
                rejected += 1
                #expect(error.format == .gif)
                switch error.code {
                case .corrupt, .tooManyPixels: break
                default: Issue.record("unexpected \(error)")
                }
            }
        }
        #expect(decoded > 0 && rejected > 0, "both outcomes: \(decoded) decoded, \(rejected) rejected")
    }
}
