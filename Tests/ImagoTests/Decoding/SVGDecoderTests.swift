import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("SVG: sniffed, rendered at the target size, intrinsic sizes, straight alpha, text, through the pipeline")
struct SVGDecoderTests {
    let decoder = SVGDecoder()

    /// 40x20: blue, with a red 20x10 rectangle at (10, 5).
    static let flag = Data(
        """
        <?xml version="1.0"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20">
          <rect width="40" height="20" fill="#0000ff"/>
          <rect x="10" y="5" width="20" height="10" fill="#ff0000"/>
        </svg>
        """.utf8)

    static let red: [UInt8] = [255, 0, 0, 255]
    static let blue: [UInt8] = [0, 0, 255, 255]
    static let clear: [UInt8] = [0, 0, 0, 0]

    static func svg(_ body: String, attributes: String = "width=\"40\" height=\"20\"") -> Data {
        Data("<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" \(attributes)>\(body)</svg>".utf8)
    }

    static func pixel(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] { PixelFixtures.pixel(image, x, y) }

    /// A red 4x4 PNG as a data URL.
    static func redPNG() throws -> String {
        "data:image/png;base64," + (try PNGEncoder().encode(PixelFixtures.solid(4, 4, .rgb8, [255, 0, 0]))).base64EncodedString()
    }

    func refusal(_ data: Data, options: ImageDecodingOptions = ImageDecodingOptions()) -> ImageDecodingError? {
        do {
            _ = try decoder.decode(data, options: options)
            return nil
        } catch {
            return error
        }
    }

    @Test("sniffed as SVG after a BOM, a declaration, comments and a DOCTYPE, with or without a prefix; not XHTML or plain XML")
    func sniffing() {
        let cases: [(String, ImageFormat)] = [
            ("<svg xmlns=\"http://www.w3.org/2000/svg\"/>", .svg),
            ("\u{FEFF}<?xml version=\"1.0\"?>\n<!-- made by hand -->\n<!DOCTYPE svg [<!ENTITY a \"b>\">]>\n<svg/>", .svg),
            ("<svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\"></svg:svg>", .svg),
            ("  \n<svg\nwidth=\"1\"/>", .svg),
            ("<html><body><svg/></body></html>", .unknown),
            ("<?xml version=\"1.0\"?><feed/>", .unknown),
            ("<svgx/>", .unknown),
        ]
        for (text, format) in cases {
            #expect(ImageFormat(sniffing: Data(text.utf8)) == format, "\(text)")
        }
        #expect(ImageFormat.svg.mediaType == "image/svg+xml")
        #expect(ImageFormat(mediaType: "image/svg+xml") == .svg)
    }

    @Test("pixels at the intrinsic size: the red rectangle's edges fall where the document puts them")
    func intrinsicPixels() throws {
        let image = try decoder.decode(Self.flag, options: ImageDecodingOptions())
        #expect(image.size == ImageSize(width: 40, height: 20))
        #expect(image.pixelFormat == .rgba8)
        #expect(Self.pixel(image, 9, 10) == Self.blue && Self.pixel(image, 10, 10) == Self.red)
        #expect(Self.pixel(image, 29, 10) == Self.red && Self.pixel(image, 30, 10) == Self.blue)
        #expect(Self.pixel(image, 20, 4) == Self.blue && Self.pixel(image, 20, 5) == Self.red)
        #expect(Self.pixel(image, 20, 14) == Self.red && Self.pixel(image, 20, 15) == Self.blue)
    }

    @Test("rendered at a target five times larger: sharp edges at five times the place, no blur of an upscale")
    func renderedLarger() throws {
        let options = ImageDecodingOptions(targetSize: ImageSize(width: 200, height: 100))
        let image = try decoder.decode(Self.flag, options: options)
        #expect(image.size == ImageSize(width: 200, height: 100))
        // The rectangle spans x 50..<150 and y 25..<75; the pixels on either side of an edge are pure colours.
        #expect(Self.pixel(image, 49, 50) == Self.blue && Self.pixel(image, 50, 50) == Self.red)
        #expect(Self.pixel(image, 149, 50) == Self.red && Self.pixel(image, 150, 50) == Self.blue)
        #expect(Self.pixel(image, 100, 24) == Self.blue && Self.pixel(image, 100, 25) == Self.red)
        #expect(Self.pixel(image, 100, 74) == Self.red && Self.pixel(image, 100, 75) == Self.blue)
        // The pipeline's last step does not change a render that already covers the target.
        #expect(options.scaled(image).size == image.size)
    }

    @Test("target sizes: fill and fit keep the aspect ratio, a side of 0 is free, no target is the intrinsic size")
    func targetSizes() throws {
        let cases: [(ImageSize?, ContentMode, ImageSize)] = [
            (nil, .fill, ImageSize(width: 40, height: 20)),
            (ImageSize(width: 100, height: 100), .fill, ImageSize(width: 200, height: 100)),
            (ImageSize(width: 100, height: 100), .fit, ImageSize(width: 100, height: 50)),
            (ImageSize(width: 10, height: 10), .fit, ImageSize(width: 10, height: 5)),
            (ImageSize(width: 0, height: 30), .fill, ImageSize(width: 60, height: 30)),
            (ImageSize(width: 8, height: 0), .fit, ImageSize(width: 8, height: 4)),
        ]
        for (target, mode, expected) in cases {
            let options = ImageDecodingOptions(targetSize: target, contentMode: mode)
            #expect(try decoder.decode(Self.flag, options: options).size == expected, "\(String(describing: target)) \(mode)")
            #expect(options.decodedBytesEstimate(of: Self.flag) == expected.width * expected.height * 4)
        }
    }

    @Test("intrinsic sizes: width and height in units, one side and the viewBox's ratio, the viewBox alone, else 300x150")
    func intrinsicSizes() throws {
        let cases: [(String, ImageSize)] = [
            ("width=\"30\" height=\"10px\"", ImageSize(width: 30, height: 10)),
            ("width=\"1in\" height=\"0.5in\"", ImageSize(width: 96, height: 48)),
            ("width=\"72pt\" height=\"2.54cm\"", ImageSize(width: 96, height: 96)),
            ("width=\"10.2\" height=\"3\"", ImageSize(width: 11, height: 3)),
            ("width=\"50\" viewBox=\"0 0 100 20\"", ImageSize(width: 50, height: 10)),
            ("height=\"50\" viewBox=\"0,0,100,20\"", ImageSize(width: 250, height: 50)),
            ("width=\"100%\" height=\"100%\" viewBox=\"0 0 64 32\"", ImageSize(width: 64, height: 32)),
            ("viewBox=\"-5 -5 12 24\"", ImageSize(width: 12, height: 24)),
            ("width=\"5em\"", ImageSize(width: 300, height: 150)),
            ("", ImageSize(width: 300, height: 150)),
            ("width=\"-4\" height=\"abc\"", ImageSize(width: 300, height: 150)),
        ]
        for (attributes, size) in cases {
            let data = Self.svg("<rect width=\"5\" height=\"5\"/>", attributes: attributes)
            #expect(ImageHeader(data).storedSize == size, "\(attributes)")
            #expect(try decoder.decode(data, options: ImageDecodingOptions()).size == size, "\(attributes)")
        }
    }

    @Test("a root element past the header's 256 KiB: the header does not say its size, the decoder still reads it")
    func lateRoot() throws {
        let comment = "<!--" + String(repeating: "x", count: 300_000) + "-->"
        let data = Data(comment.utf8) + Self.svg("<rect width=\"5\" height=\"5\"/>", attributes: "width=\"30\" height=\"10\"")
        #expect(ImageFormat(sniffing: data) == .unknown, "sniffed within 64 KiB")
        #expect(SVGIntrinsicSize(reading: data) == nil)
        #expect(try decoder.decode(data, options: ImageDecodingOptions()).size == ImageSize(width: 30, height: 10))
    }

    @Test("a viewBox is mapped onto the render; a document without one is scaled from its width and height")
    func viewBoxMapping() throws {
        // The same picture, once in a viewBox ten times smaller.
        let boxed = Self.svg(
            "<rect x=\"1\" y=\"0.5\" width=\"2\" height=\"1\" fill=\"red\"/>", attributes: "width=\"40\" height=\"20\" viewBox=\"0 0 4 2\"")
        let plain = Self.svg("<rect x=\"10\" y=\"5\" width=\"20\" height=\"10\" fill=\"red\"/>")
        let options = ImageDecodingOptions(targetSize: ImageSize(width: 80, height: 40))
        let first = try decoder.decode(boxed, options: options)
        let second = try decoder.decode(plain, options: options)
        #expect(first == second)
        #expect(Self.pixel(first, 19, 20) == Self.clear && Self.pixel(first, 20, 20) == Self.red && Self.pixel(first, 59, 29) == Self.red)
    }

    @Test("partly transparent paint comes out as straight alpha, not premultiplied")
    func straightAlpha() throws {
        let data = Self.svg("<rect width=\"40\" height=\"20\" fill=\"#ff8000\" fill-opacity=\"0.5\"/>")
        let pixel = Self.pixel(try decoder.decode(data, options: ImageDecodingOptions()), 5, 5)
        #expect(pixel[3] == 128 || pixel[3] == 127, "\(pixel)")
        #expect(pixel[0] == 255 && abs(Int(pixel[1]) - 128) <= 1 && pixel[2] == 0, "\(pixel)")
    }

    @Test("an ImageRequest for an SVG URL decodes with the default decoders, rendered at its target size")
    func pipelineRequest() async throws {
        // Given a pipeline with the default decoders and a loader serving the document
        let loader = MockDataLoader()
        let url = URL(string: "https://images.example/flag.svg")!
        loader.setReply(.init(data: Self.flag), for: url)
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: nil, trimsMemoryOnPressure: false))

        // When it is asked for at twice, then half, its size
        let large = try await pipeline.image(for: ImageRequest(url: url, targetSize: ImageSize(width: 80, height: 80), contentMode: .fit))
        let small = try await pipeline.image(for: ImageRequest(url: url, targetSize: ImageSize(width: 20, height: 20), contentMode: .fit))

        // Then each is rendered at that size, the edges sharp
        #expect(large.image.size == ImageSize(width: 80, height: 40))
        #expect(Self.pixel(large.image, 19, 20) == Self.blue && Self.pixel(large.image, 20, 20) == Self.red)
        #expect(small.image.size == ImageSize(width: 20, height: 10))
    }

    @Test("text is drawn (with the system's fonts)")
    func text() throws {
        let data = Self.svg("<text x=\"2\" y=\"16\" font-size=\"16\" fill=\"black\">Hi</text>")
        let image = try decoder.decode(data, options: ImageDecodingOptions())
        let inked = stride(from: 3, to: image.pixels.count, by: 4).filter { image.pixels[$0] > 0 }.count
        #expect(inked > 10, "\(inked) pixels inked")
    }
}
