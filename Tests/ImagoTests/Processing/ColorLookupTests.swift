import Foundation
import Testing

@testable import ImagoCodecs

/// Brightness, contrast, per-channel offsets and noise, with the values
/// thumbor 7.8 gave for the same filters.
@Suite("Colour lookups and noise: thumbor's brightness, contrast, rgb and noise")
struct ColorLookupTests {
    static func flat(_ rgb: [UInt8], alpha: UInt8? = nil, width: Int = 4, height: Int = 3) -> Image {
        let pixel = rgb + (alpha.map { [$0] } ?? [])
        return Image(
            width: width, height: height, pixelFormat: alpha == nil ? .rgb8 : .rgba8,
            pixels: Array((0..<(width * height)).map { _ in pixel }.joined()))!
    }

    @Test("thumbor's values: brightness ±40 on 128, rgb(20,-20,0) on 128, contrast on 100 and 200; alpha kept")
    func thumborValues() throws {
        let gray = Self.flat([128, 128, 128], alpha: 77)
        #expect(try #require(ImageProcessors.ColorLookup.brightness(40).process(gray)).pixels.prefix(4) == [230, 230, 230, 77])
        #expect(try #require(ImageProcessors.ColorLookup.brightness(-40).process(gray)).pixels.prefix(4) == [26, 26, 26, 77])
        #expect(try #require(ImageProcessors.ColorLookup.offsets(red: 20, green: -20, blue: 0).process(gray)).pixels.prefix(4) == [179, 77, 128, 77])
        let contrast = ImageProcessors.ColorLookup.contrast(40)
        #expect(try #require(contrast.process(Self.flat([100, 200, 128]))).pixels.prefix(3) == [74, 255, 128])
        #expect(try #require(ImageProcessors.ColorLookup.contrast(-100).process(Self.flat([0, 90, 255]))).pixels.prefix(3) == [128, 128, 128])
        #expect(ImageProcessors.ColorLookup.brightness(0).process(gray) == gray)
    }

    @Test("gray stays gray for brightness and contrast; per-channel offsets make it RGB")
    func gray() throws {
        let gray = Image(width: 2, height: 2, pixelFormat: .grayAlpha8, pixels: [100, 9, 100, 9, 100, 9, 100, 9])!
        let brighter = try #require(ImageProcessors.ColorLookup.brightness(10).process(gray))
        #expect(brighter.pixelFormat == .grayAlpha8 && brighter.pixels.prefix(2) == [125, 9])
        let tinted = try #require(ImageProcessors.ColorLookup.offsets(red: 10, green: 0, blue: 0).process(gray))
        #expect(tinted.pixelFormat == .rgba8 && tinted.pixels.prefix(4) == [125, 100, 100, 9])
    }

    @Test("noise: one offset per pixel on all its colour channels, within ±amount/2, the same for the same seed")
    func noise() throws {
        let image = Self.flat([128, 128, 128], alpha: 200, width: 64, height: 64)
        let noisy = try #require(ImageProcessors.Noise(amount: 40, seed: 7).process(image))
        #expect(noisy == ImageProcessors.Noise(amount: 40, seed: 7).process(image))
        #expect(noisy != ImageProcessors.Noise(amount: 40, seed: 8).process(image))
        var offsets = Set<Int>()
        for index in stride(from: 0, to: noisy.pixels.count, by: 4) {
            let pixel = noisy.pixels[index..<(index + 4)]
            #expect(pixel.dropLast().allSatisfy { $0 == pixel.first } && pixel.last == 200)
            offsets.insert(Int(pixel.first!) - 128)
        }
        #expect(offsets.min()! >= -20 && offsets.max()! < 20 && offsets.count > 30)
        #expect(ImageProcessors.Noise(amount: 0, seed: 1).process(image) == image)
    }

    @Test("colours by CSS name or hex digits, as Pillow reads them for thumbor's fill and background_color")
    func cssColors() {
        #expect(Color(cssName: "red") == Color(red: 255, green: 0, blue: 0))
        #expect(Color(cssName: "RebeccaPurple") == Color(red: 0x66, green: 0x33, blue: 0x99))
        #expect(Color(cssName: "00ff00") == Color(red: 0, green: 255, blue: 0))
        #expect(Color(cssName: "#F80") == Color(red: 255, green: 136, blue: 0))
        #expect(Color(cssName: "ff000080") == Color(red: 255, green: 0, blue: 0, alpha: 128))
        #expect(Color(cssName: "f008") == Color(red: 255, green: 0, blue: 0, alpha: 136))
        #expect(Color.cssNames.count == 148)
        for bad in ["zzzz", "", "#", "12345", "gg0000", "red "] {
            #expect(Color(cssName: bad) == nil, "\(bad)")
        }
        #expect(
            Color(hexDigits: "ff00", allowingAlpha: false) == nil
                && Color(hexDigits: "FF0000", allowingAlpha: false) == .init(red: 255, green: 0, blue: 0))
    }
}
