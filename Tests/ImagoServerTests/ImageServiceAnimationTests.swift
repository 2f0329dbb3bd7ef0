import Foundation
import Imago
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoServer

/// Animated sources answered animated where the format animates: every
/// frame laid out alike, durations and loop count kept, the work bounded.
@Suite("Image service: animations")
struct ImageServiceAnimationTests {
    /// Three 120x80 frames of one colour each (red, green, blue), shown
    /// 0.1, 0.2 and 0.3 s, played three times.
    static let colors: [[UInt8]] = [[220, 30, 30], [30, 200, 40], [30, 40, 210]]
    static let durations = [0.1, 0.2, 0.3]

    static let frames = colors.map { color in
        Image(width: 120, height: 80, pixelFormat: .rgb8, pixels: [UInt8]((0..<(120 * 80)).flatMap { _ in color }))!
    }

    static func source() throws -> Data {
        try GIFEncoder().encode(frames: frames, durations: durations, loopCount: 3)
    }

    static func start(avif: Bool = false) async throws -> (TestImageServer, URL) {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        if avif {
            server.setRoute("/spinner.avif", .init(body: try FormatFixtures.avif(frames)))
            return (server, server.url("/spinner.avif"))
        }
        server.setRoute("/spinner.gif", .init(body: try source()))
        return (server, server.url("/spinner.gif"))
    }

    /// The answer decoded, every frame with its duration.
    static func frames(_ body: Data) throws -> (first: Image, frames: [Image], durations: [Double], loopCount: Int) {
        let format = ImageFormat(sniffing: body)
        let decoders: [ImageFormat: any ImageDecoding] = [.gif: GIFDecoder(), .webp: WebPDecoder()]
        let decoder = decoders[format] ?? PNGDecoder()
        let first = try decoder.decode(body, options: ImageDecodingOptions())
        guard let animation = first.animation else { return (first, [first], [], 1) }
        let pass = try animation.frames()
        var frames: [Image] = []
        while let frame = try pass.next() { frames.append(frame) }
        return (first, frames, animation.frameDurations, animation.loopCount)
    }

    @Test("a GIF answered as WebP and as GIF keeps its frames, each resized, their durations and its loop count")
    func animatedOutputs() async throws {
        // Given an animated GIF source
        let (server, source) = try await Self.start()
        let service = try ImageServiceOptionsTests.service(in: TemporaryDirectory())
        for (options, mediaType) in [("w:60/f:webp", "image/webp"), ("w:60/f:gif", "image/gif"), ("w:60", "image/gif")] {
            // When answered in a format that animates (auto without AVIF or WebP in Accept: GIF)
            let response = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain(options, source)))
            #expect(response.status == 200, "\(options)")
            #expect(response.headers[.contentType] == mediaType, "\(options)")
            // Then every frame is there at 60x40 with its colour, its duration and the loop count
            let answer = try Self.frames(response.body)
            #expect(answer.frames.count == 3, "\(options)")
            #expect(answer.frames.allSatisfy { $0.size == ImageSize(width: 60, height: 40) }, "\(options)")
            for (frame, color) in zip(answer.frames, Self.colors) {
                let pixel = FormatFixtures.rgba(frame, x: 30, y: 20)
                #expect(zip(pixel, color).allSatisfy { abs(Int($0) - Int($1)) <= 12 }, "\(options): \(pixel) for \(color)")
            }
            #expect(zip(answer.durations, Self.durations).allSatisfy { abs($0 - $1) < 0.011 }, "\(options): \(answer.durations)")
            #expect(answer.loopCount == 3, "\(options)")
        }
        try await server.shutdown()
    }

    @Test("a format without animation answers the first frame; maf cuts the frames; maf:1 answers a still")
    func framesAndStills() async throws {
        let (server, source) = try await Self.start()
        let service = try ImageServiceOptionsTests.service(in: TemporaryDirectory()) { $0.allowsSourceLimits = true }
        // PNG: the first frame
        let png = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:60/f:png", source)))
        let still = try Self.frames(png.body)
        #expect(png.status == 200 && still.first.animation == nil && still.first.size == ImageSize(width: 60, height: 40))
        #expect(Array(FormatFixtures.rgba(still.first, x: 30, y: 20).prefix(3)) == Self.colors[0])
        // maf:2: the first two frames
        let two = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:60/f:webp/maf:2", source)))
        #expect(try Self.frames(two.body).frames.count == 2)
        // maf:1: a still WebP
        let one = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:60/f:webp/maf:1", source)))
        let oneFrame = try Self.frames(one.body)
        #expect(one.status == 200 && oneFrame.first.animation == nil)
        try await server.shutdown()
    }

    @Test("pg picks a frame, answered as a still in any format; a frame past the last is a 422")
    func pages() async throws {
        let (server, source) = try await Self.start()
        let service = try ImageServiceOptionsTests.service(in: TemporaryDirectory())
        for (options, color) in [("w:60/pg:1/f:png", Self.colors[1]), ("w:60/page:2/f:webp", Self.colors[2]), ("w:60/pg:2/f:gif", Self.colors[2])] {
            let response = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain(options, source)))
            let answer = try Self.frames(response.body)
            #expect(response.status == 200 && answer.first.animation == nil, "\(options)")
            #expect(
                Array(FormatFixtures.rgba(answer.first, x: 30, y: 20).prefix(3)).elementsEqual(color) { abs(Int($0) - Int($1)) <= 8 }, "\(options)")
        }
        let missing = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:60/pg:3/f:png", source)))
        #expect(missing.status == 422, "\(String(decoding: missing.body, as: UTF8.self))")
        #expect(String(decoding: missing.body, as: UTF8.self).contains("no page 3"))
        try await server.shutdown()
    }

    @Test("pg picks a TIFF's page, measured by its own size, not the first page's")
    func tiffPages() async throws {
        // Given a TIFF whose first page is 400x200 and whose second is 60x40 of blue
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let tiff = try FormatFixtures.tiff([
            FormatFixtures.TIFFPage(FormatFixtures.quadrants(width: 400, height: 200)), FormatFixtures.TIFFPage(Self.frames[2]),
        ])
        server.setRoute("/pages.tif", .init(body: tiff))
        let service = try ImageServiceOptionsTests.service(in: TemporaryDirectory()) { $0.allowsSourceLimits = true }
        // When the second page is asked for under a pixel limit the first page is over
        let response = await service.respond(
            to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:30/pg:1/msr:0.01/f:png", server.url("/pages.tif"))))
        // Then it is that page, resized
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let image = try PNGDecoder().decode(response.body, options: ImageDecodingOptions())
        #expect(image.size == ImageSize(width: 30, height: 20))
        #expect(Array(FormatFixtures.rgba(image, x: 15, y: 10).prefix(3)) == Self.colors[2])
        try await server.shutdown()
    }

    @Test(
        "an animation of too many pixels in all (msr), or with too large frames (mafr), is a 422 before decoding; its first frame is not",
        arguments: ["GIF", "AVIF sequence"])
    func limits(kind: String) async throws {
        let (server, source) = try await Self.start(avif: kind == "AVIF sequence")
        let service = try ImageServiceOptionsTests.service(in: TemporaryDirectory()) { $0.allowsSourceLimits = true }
        // 3 frames of 9,600 pixels: 28,800 pixels in all
        let answers = [
            ("w:60/f:webp/msr:0.02", 422), ("w:60/f:png/msr:0.02", 200), ("w:60/f:webp/maf:2/msr:0.02", 200),
            ("w:60/f:webp/mafr:0.005", 422), ("w:60/f:webp/mafr:0.01", 200),
        ]
        for (options, status) in answers {
            let response = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain(options, source)))
            #expect(response.status == status, "\(options): \(String(decoding: response.body, as: UTF8.self))")
        }
        try await server.shutdown()
    }
}
