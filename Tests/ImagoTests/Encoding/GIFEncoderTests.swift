import Foundation
import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("GIF encoder: exact palettes, quantised photos, transparency, animations read back by GIFDecoder and gifsicle")
struct GIFEncoderTests {
    let options = ImageDecodingOptions()

    /// An image of `colorCount` colours in 4x4 tiles; with `transparentTiles`,
    /// every seventh tile is transparent (alpha under 128) instead.
    static func tiles(colorCount: Int, format: Image.PixelFormat, transparentTiles: Bool = false, padding: Int = 0) -> Image {
        let (width, height) = (64, 4 * ((colorCount + 15) / 16 + 1))
        let pixels = (0..<(width * height)).map { position -> [UInt8] in
            let tile = (position / width / 4) * 16 + (position % width) / 4
            let color = tile % colorCount
            let transparent = transparentTiles && tile % 7 == 3
            let (red, green, blue) = (UInt8(color * 37 % 256), UInt8(color * 11 % 256), UInt8(color))
            switch format {
            case .gray8: return [UInt8(color)]
            case .grayAlpha8: return [UInt8(color), transparent ? UInt8(tile % 128) : 128 + UInt8(tile % 128)]
            case .rgb8: return [red, green, blue]
            case .rgba8: return [red, green, blue, transparent ? UInt8(tile % 128) : 128 + UInt8(tile % 128)]
            }
        }
        return PixelFixtures.image(width, height, format, padding: padding, pixels)
    }

    /// `image` as GIF shows it: alpha under 128 transparent, the rest opaque.
    static func oneBitAlpha(_ image: Image) -> Image {
        let pixels = (0..<image.height).flatMap { y in
            (0..<image.width).map { x in
                let rgba = PixelFixtures.rgba(image, x, y)
                return rgba[3] < 128 ? [0, 0, 0, 0] : [rgba[0], rgba[1], rgba[2], 255]
            }
        }
        return PixelFixtures.image(image.width, image.height, .rgba8, pixels)
    }

    /// The RGB averages of `image`'s 4x4 blocks, as an image a quarter its size.
    static func blockAverages(_ image: Image) -> Image {
        let (width, height) = (image.width / 4, image.height / 4)
        let pixels = (0..<(width * height)).map { block -> [UInt8] in
            let (bx, by) = (block % width * 4, block / width * 4)
            return (0..<3).map { channel in
                let sum = (0..<16).reduce(0) { $0 + Int(PixelFixtures.rgba(image, bx + $1 % 4, by + $1 / 4)[channel]) }
                return UInt8((sum + 8) / 16)
            }
        }
        return PixelFixtures.image(width, height, .rgb8, pixels)
    }

    @Test("a still image of at most 256 colours comes back exactly, in every pixel format, with row padding")
    func exactStill() throws {
        // Given images of 256 colours, or 255 and transparency, in each layout
        for format in PixelFixtures.formats {
            let alpha = format.hasAlpha
            let image = Self.tiles(colorCount: alpha ? 255 : 256, format: format, transparentTiles: alpha, padding: 3)
            #expect(GIFPalette.exact(GIFPixels.of(image)) != nil, "\(format)")
            // When it is written as GIF and read back
            let data = try GIFEncoder().encode(image)
            #expect(ImageFormat(sniffing: data) == .gif)
            let decoded = try GIFDecoder().decode(data, options: options)
            // Then every pixel is as it was, alpha reduced to one bit
            #expect(decoded.animation == nil)
            #expect(AnimationSamples.sameRGBA(decoded, Self.oneBitAlpha(image)), "\(format)")
        }
    }

    @Test("a photo of more than 256 colours is quantised with dithering and stays close")
    func quantisedStill() throws {
        // Given a smooth photo of thousands of colours
        let photo = CodecTests.gradient(width: 160, height: 120)
        #expect(GIFPalette.exact(GIFPixels.of(photo)) == nil)
        for (dithering, speed): (Float, Int) in [(1, 7), (0, 7), (1, 1), (1, 10)] {
            // When it is written as GIF
            let decoded = try GIFDecoder().decode(try GIFEncoder(dithering: dithering, speed: speed).encode(photo), options: options)
            // Then it is close on average, with or without dithering
            let error = AnimationSamples.meanColorError(decoded, photo)
            #expect(error < 5, "dithering \(dithering), speed \(speed): mean error \(error)")
            // Dithering spreads the error so that small areas keep their average colour.
            let blockError = AnimationSamples.meanColorError(Self.blockAverages(decoded), Self.blockAverages(photo))
            #expect(blockError < (dithering > 0 ? 1.2 : 3), "dithering \(dithering), speed \(speed): mean error of 4x4 averages \(blockError)")
        }
        // A photo with transparency keeps its transparent pixels transparent and the rest opaque.
        let withAlpha = CodecTests.gradient(width: 160, height: 120, format: .rgba8)
        let decoded = try GIFDecoder().decode(try GIFEncoder().encode(withAlpha), options: options)
        let expected = Self.oneBitAlpha(withAlpha)
        for (x, y) in [(0, 0), (100, 27), (127, 0), (128, 0), (159, 119), (64, 64)] {
            #expect(PixelFixtures.rgba(decoded, x, y)[3] == PixelFixtures.rgba(expected, x, y)[3], "(\(x), \(y))")
        }
        #expect(AnimationSamples.meanColorError(decoded, expected) < 6)
    }

    @Test("an animation with few colours comes back exactly: frames, durations, loop count; gifsicle reads the same")
    func animationRoundTrip() throws {
        // Given five frames of a square moving over a flat background
        let frames = AnimationSamples.movingSquare(frameCount: 5)
        let durations = [0.1, 0.25, 0.07, 0.5, 1.0]
        // When they are written as a GIF that plays forever
        let data = try GIFEncoder().encode(frames: frames, durations: durations, loopCount: 0)
        // Then GIFDecoder gives back every frame exactly, with its duration
        let image = try GIFDecoder().decode(data, options: options)
        let animation = try #require(image.animation)
        #expect(animation.frameCount == 5)
        #expect(animation.frameDurations == durations)
        #expect(animation.loopCount == 0)
        #expect(animation.frameSize == ImageSize(width: 48, height: 32))
        let decoded = try AnimationSamples.frames(of: image)
        #expect(decoded.count == 5)
        for (index, (actual, expected)) in zip(decoded, frames).enumerated() {
            #expect(AnimationSamples.sameRGBA(actual, expected), "frame \(index)")
        }
        // And gifsicle sees the same, with frames after the first covering only what changed
        let info = try CommandLineTool.gifsicle.output(["--info"], on: data, fileExtension: "gif")
        #expect(info.contains("5 images"), "\(info)")
        #expect(info.contains("logical screen 48x32"), "\(info)")
        #expect(info.contains("loop forever"), "\(info)")
        for delay in ["0.10s", "0.25s", "0.07s", "0.50s", "1.00s"] { #expect(info.contains("delay \(delay)"), "\(info)") }
        #expect(info.contains("+ image #1 24x16 at 0,8"), "\(info)")
    }

    @Test("a shape moving over nothing: frames are cleared where the next one is transparent")
    func transparentAnimation() throws {
        // Given a square moving over a transparent background
        let frames = AnimationSamples.movingSquare(frameCount: 4, transparent: true)
        // When written and read back
        let data = try GIFEncoder().encode(frames: frames, durations: Array(repeating: 0.1, count: 4), loopCount: 0)
        let decoded = try AnimationSamples.frames(of: try GIFDecoder().decode(data, options: options))
        // Then no frame shows the square where an earlier frame drew it
        #expect(decoded.count == 4)
        for (index, (actual, expected)) in zip(decoded, frames).enumerated() {
            #expect(AnimationSamples.sameRGBA(actual, expected), "frame \(index)")
        }
        let info = try CommandLineTool.gifsicle.output(["--info"], on: data, fileExtension: "gif")
        #expect(info.contains("disposal background"), "\(info)")
    }

    @Test("a photo animation of shifting colours is quantised and stays close")
    func quantisedAnimation() throws {
        let frames = AnimationSamples.photoFrames(frameCount: 4)
        let data = try GIFEncoder().encode(frames: frames, durations: Array(repeating: 0.05, count: 4), loopCount: 0)
        let decoded = try AnimationSamples.frames(of: try GIFDecoder().decode(data, options: options))
        #expect(decoded.count == 4)
        for (index, (actual, expected)) in zip(decoded, frames).enumerated() {
            let error = AnimationSamples.meanColorError(actual, expected)
            #expect(error < 5, "frame \(index): mean error \(error)")
            let blockError = AnimationSamples.meanColorError(Self.blockAverages(actual), Self.blockAverages(expected))
            #expect(blockError < 1, "frame \(index): mean error of 4x4 averages \(blockError)")
        }
    }

    @Test(
        "loop counts: plays forever, once (no extension), n times (n - 1 repetitions), read back alike by GIFDecoder",
        arguments: [(0, "loop forever"), (1, nil), (2, "loop count 1"), (7, "loop count 6"), (65536, "loop count 65535")])
    func loopCounts(loopCount: Int, gifsicleLine: String?) throws {
        let frames = AnimationSamples.movingSquare(frameCount: 2)
        let data = try GIFEncoder().encode(frames: frames, durations: [0.1, 0.1], loopCount: loopCount)
        #expect(try GIFDecoder().decode(data, options: options).animation?.loopCount == loopCount)
        let info = try CommandLineTool.gifsicle.output(["--info"], on: data, fileExtension: "gif")
        if let gifsicleLine {
            #expect(info.contains(gifsicleLine), "\(info)")
        } else {
            #expect(!info.contains("loop"), "\(info)")
        }
    }

    @Test("delays are centiseconds that keep the running time: each frame ends at the nearest one, and lasts 2 at least")
    func delays() throws {
        let frames = AnimationSamples.movingSquare(frameCount: 3)
        let thirds = try GIFEncoder().encode(frames: frames, durations: [0.033, 0.033, 0.034], loopCount: 0)
        #expect(try GIFDecoder().decode(thirds, options: options).animation?.frameDurations == [0.03, 0.04, 0.03])
        // 0 and 5 ms would be shown for 100 ms by browsers: the shortest they show as it is, then catching up.
        let short = try GIFEncoder().encode(frames: frames, durations: [0, 0.005, 0.2], loopCount: 0)
        #expect(try GIFDecoder().decode(short, options: options).animation?.frameDurations == [0.02, 0.02, 0.17])
        // Longer than GIF's 16 bits of centiseconds: cut to 655.35 s.
        let long = try GIFEncoder().encode(frames: frames, durations: [0.1, 1000, 0.1], loopCount: 0)
        #expect(try GIFDecoder().decode(long, options: options).animation?.frameDurations == [0.1, 655.35, 0.1])
    }

    @Test("frames that do not change still count as frames")
    func unchangedFrames() throws {
        let frame = AnimationSamples.movingSquare(frameCount: 1)[0]
        let data = try GIFEncoder().encode(frames: [frame, frame, frame], durations: [0.1, 0.2, 0.3], loopCount: 0)
        let image = try GIFDecoder().decode(data, options: options)
        #expect(image.animation?.frameDurations == [0.1, 0.2, 0.3])
        for decoded in try AnimationSamples.frames(of: image) { #expect(AnimationSamples.sameRGBA(decoded, frame)) }
    }

    @Test("an image as wide as GIF allows is written; wider is a typed error")
    func limits() throws {
        let wide = PixelFixtures.solid(0xFFFF, 1, .gray8, [7])
        let decoded = try GIFDecoder().decode(try GIFEncoder().encode(wide), options: options)
        #expect(decoded.size == wide.size)
        let tooWide = PixelFixtures.solid(0x10000, 1, .gray8, [7])
        #expect(throws: ImageEncodingError.self) { try GIFEncoder().encode(tooWide) }
        #expect(throws: ImageEncodingError.self) { try GIFEncoder().animationWriter(frameSize: ImageSize(width: 4, height: 4), loopCount: 65537) }
    }
}
