import Foundation
import Imago
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoServer

/// The processing model's operations, each spelt in both URL languages and
/// answered alike: an operation added to ``Effect`` fails the coverage
/// check below until imgproxy's options and thumbor's filters both name it
/// and give the same pixels.
@Suite("The processing model: every effect spelt in imgproxy's and thumbor's URLs, answered alike")
struct ModelOperationTests {
    /// One example of each kind: the imgproxy options and the thumbor
    /// filters that ask for it (with the same parameters, in each language's units).
    static let examples: [(kind: Effect.Kind, imgproxy: String, thumbor: String)] = [
        (.blur, "bl:2", "blur(4,2)"),
        (.sharpen, "sh:1.5", "sharpen(2,1.5,true)"),
        (.pixelate, "pix:8", "pixelate(8)"),
        // thumbor's gray is Rec. 601's luma; imgproxy's Rec. 709's unless asked.
        (.grayscale, "imago_gray:1:601", "grayscale()"),
        (.brightness, "imago_brightness:30", "brightness(30)"),
        (.contrast, "imago_contrast:40", "contrast(40)"),
        (.channelOffsets, "imago_rgb:10:-5:0", "rgb(10,-5,0)"),
        (.noise, "imago_noise:20:7", "noise(20,7)"),
        (.roundedCorners, "imago_radius:12", "round_corner(12,0,0,0,true)"),
        // imgproxy turns clockwise, thumbor counter-clockwise.
        (.rotate, "rot:270", "rotate(90)"),
        (.flatten, "bg:ff0000", "background_color(ff0000)"),
        (.saturation, "sa:1.8", "saturation(1.8)"),
        (.equalize, "imago_equalize:1", "equalize()"),
        (.convolution, "imago_convolution:1;2;1;2;4;2;1;2;1:3", "convolution(1;2;1;2;4;2;1;2;1,3,true)"),
        (
            .curve, "imago_curve:0,0;40,59;255,255:0,0;128,160;255,255:0,0;255,255:0,20;200,180;255,255",
            "curve([(0,0),(40,59),(255,255)],[(0,0),(128,160),(255,255)],[(0,0),(255,255)],[(0,20),(200,180),(255,255)])"
        ),
        (.colorize, "imago_colorize:40:80:20:ffd700", "colorize(40,80,20,ffd700)"),
    ]

    @Test("every kind of effect the model has is in the examples, and each language's spelling parses to that kind")
    func everyKindIsSpelt() throws {
        #expect(Set(Self.examples.map(\.kind)) == Set(Effect.Kind.allCases), "a kind of effect lacks its spellings")
        for example in Self.examples {
            let thumbor = try ThumborFilter(example.thumbor)
            #expect(thumbor.effect?.kind == example.kind, "\(example.thumbor)")
            let options = try ProcessingOptions.Parser().options(example.imgproxy.split(separator: "/"))
            // Rotation and the background are imgproxy's layout steps; the others its effects.
            let kinds = options.effects(dprScale: 1).map(\.kind) + (options.rotate != 0 ? [.rotate] : []) + (options.flatten ? [.flatten] : [])
            #expect(kinds == [example.kind], "\(example.imgproxy): \(kinds)")
        }
    }

    @Test("each effect answers with the same pixels from an imgproxy URL and from a thumbor URL")
    func bothLanguagesAnswerAlike() async throws {
        // Given a source with colour, shades and transparency
        let server = try await TestImageServer.start(host: "127.0.0.2")
        var source = FormatFixtures.quadrants(width: 96, height: 64, alpha: true)
        source = ImageProcessors.Noise(amount: 60, seed: 3).process(source) ?? source
        server.setRoute("/a.png", .init(body: try PNGEncoder().encode(source)))
        let service = try ImageServiceThumborTests.service()
        let url = server.url("/a.png").absoluteString
        for example in Self.examples {
            // When each language asks for the effect, as a PNG at the source's size
            let imgproxy = await service.respond(to: ServiceRequest(path: "/unsafe/\(example.imgproxy)/f:png/plain/\(url)"))
            let thumbor = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/filters:\(example.thumbor):format(png)/\(url)"))
            // Then both answer, with the same image
            #expect(imgproxy.status == 200 && thumbor.status == 200, "\(example.kind): \(imgproxy.status), \(thumbor.status)")
            guard imgproxy.status == 200, thumbor.status == 200 else { continue }
            let (left, right) = (try ImageServiceTests.decoded(imgproxy), try ImageServiceTests.decoded(thumbor))
            #expect(left.size == right.size, "\(example.kind): \(left.size) and \(right.size)")
            guard left.size == right.size else { continue }
            let difference = Self.largestDifference(left, right)
            #expect(difference == 0, "\(example.kind): channels differ by up to \(difference)")
        }
        try await server.shutdown()
    }

    @Test("thumbor's extract_focal() answers as focal() with the nested URL's crop, from the nested URL's image")
    func extractFocal() async throws {
        let server = try await ImageServiceThumborTests.photoServer()
        let service = try ImageServiceThumborTests.service()
        let source = server.url("/land.jpg").absoluteString
        let nested = "thumbor.example/unsafe/0x600:100x700/fit-in/50x50/\(source)"
        let extracted = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x100/filters:extract_focal():format(png)/\(nested)"))
        let focal = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x100/filters:focal(0x600:100x700):format(png)/\(source)"))
        let plain = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x100/filters:format(png)/\(source)"))
        #expect(extracted.status == 200 && focal.status == 200, "\(ImageServiceThumborTests.body(extracted))")
        #expect(try ImageServiceTests.decoded(extracted) == ImageServiceTests.decoded(focal))
        #expect(try ImageServiceTests.decoded(extracted) != ImageServiceTests.decoded(plain), "the focal region moves the crop")
        // Without a crop in the nested URL there is nothing to extract: the image part is fetched as it is.
        let path = try ThumborPath("/unsafe/300x100/filters:extract_focal()/thumbor.example/unsafe/fit-in/50x50/\(source)")
        #expect(path.extractedFocalRegion() == nil)
        let signed = try ThumborPath("/unsafe/filters:extract_focal()/https://t.example/c2lnbmF0dXJl/1x2:30x40/img.example/a.jpg")
        #expect(signed.extractedFocalRegion()?.image == "img.example/a.jpg")
        #expect(signed.extractedFocalRegion()?.region == ThumborPath.Crop(left: 1, top: 2, right: 30, bottom: 40))
        try await server.shutdown()
    }

    @Test("bad arguments of the model's newer operations are a 400 naming the option, in both languages")
    func badArguments() throws {
        for filter in [
            "convolution(1;2;1;2,2,true)", "convolution(1;x;1,3)", "convolution(\(Array(repeating: "1", count: 169).joined(separator: ";")),13)",
            "curve([(0,0),(255,255)],[(0,0)],[(9,0),(3,4)],[(0,0)])", "curve([(0,0)],[(0,0)],[(0,0)])",
            "curve([(0,0),(300,1)],[(0,0)],[(0,0)],[(0,0)])",
            "colorize(1,2,3,ff)", "colorize(1,2,ffd700)", "saturation(x)", "equalize(1)", "stretch(1)",
        ] {
            #expect(throws: OptionError.self, "\(filter)") { _ = try ThumborFilter(filter) }
        }
        let parser = ProcessingOptions.Parser()
        for option in [
            "imago_convolution:1;2;1;2:2", "imago_convolution:1;x;1:3", "imago_curve:0,0:9,0;3,4:0,0:0,0", "imago_curve:0,0:0,0:0,0",
            "imago_colorize:1:2:3:ff", "sa:-1", "sa:x", "imago_rgb:1:2",
        ] {
            #expect(throws: OptionError.self, "\(option)") { _ = try parser.options([option]) }
        }
    }

    @Test("each URL language parses into one plan: format, quality, bytes, metadata, limits, passing through, delivery")
    func plans() throws {
        // imgproxy: every field from its options
        let options = try ProcessingOptions.Parser().options(
            "sm:0/scp:0/ar:0/q:70/fq:webp:50/mb:9000/pg:2/eth:1/skp:png:gif/f:png/exp:4102444800/fn:cat/att:1".split(separator: "/"))
        let imgproxy = options.plan(format: .png)
        #expect(imgproxy.format == .png && imgproxy.quality == 70 && imgproxy.formatQuality == [.webp: 50] && imgproxy.maximumBytes == 9000)
        #expect(imgproxy.metadata.everything && imgproxy.metadata.rgbProfile && imgproxy.metadata.viewerTurns)
        #expect(imgproxy.page == 2 && imgproxy.prefersEmbeddedThumbnail && !imgproxy.raw && !imgproxy.keepsSVG)
        #expect(imgproxy.passedFormats == [.png], "skp passes only the format f names")
        let delivery = options.delivery(negotiated: false)
        #expect(delivery.expires == 4_102_444_800 && delivery.filename == "cat" && delivery.attachment && !delivery.negotiated)
        let defaults = ProcessingOptions().plan(format: .jpegOrPNG)
        #expect(!defaults.metadata.everything && defaults.metadata.copyright && !defaults.metadata.rgbProfile && defaults.keepsSVG)

        // thumbor: the filters that are about the answer; the last of each wins
        let path = try ThumborPath(
            "/unsafe/300x200/filters:format(webp):quality(10):quality(55):max_bytes(9000):strip_icc():max_age(60)/a.example/b.jpg")
        let processor = ThumborProcessor(path: path, filters: try ThumborFilter.list(path.filters))
        let thumbor = try processor.plan()
        #expect(thumbor.format == .webp && thumbor.quality == 55 && thumbor.maximumBytes == 9000 && !thumbor.metadata.rgbProfile)
        #expect(!thumbor.metadata.everything && !thumbor.metadata.copyright && thumbor.passedFormats.isEmpty && !thumbor.keepsSVG)
        #expect(processor.delivery(now: 100).expires == 160)
        // Without format() the source's is kept, as thumbor keeps it.
        let kept = try ThumborProcessor(path: try ThumborPath("/unsafe/300x200/a.example/b.jpg"), filters: []).plan()
        #expect(kept.format == nil && kept.metadata.rgbProfile)
        #expect(
            [ImageFormat.png, .svg, .gif, .webp, .avif, .heic, .jpeg].map(OutputFormat.keeping) == [.png, .png, .gif, .webp, .avif, .jpeg, .jpeg])
    }

    /// The largest difference between two images' channels, both as RGBA.
    static func largestDifference(_ left: Image, _ right: Image) -> Int {
        var largest = 0
        for y in 0..<left.height {
            for x in 0..<left.width {
                for (a, b) in zip(FormatFixtures.rgba(left, x: x, y: y), FormatFixtures.rgba(right, x: x, y: y)) {
                    largest = max(largest, abs(Int(a) - Int(b)))
                }
            }
        }
        return largest
    }
}
