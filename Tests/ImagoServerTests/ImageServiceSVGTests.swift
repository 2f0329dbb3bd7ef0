import Foundation
import HTTPTypes
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoServer

/// SVG sources through imgproxy's and thumbor's URLs: answered as SVG,
/// sanitised, or rasterised at the answer's size.
@Suite("Image service: SVG sources answered sanitised as SVG, or rasterised at the answer's size")
struct ImageServiceSVGTests {
    /// 40x20: blue, a red 20x10 rectangle at (10, 5), and things a sanitiser removes.
    static let flag = Data(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" onload="alert(1)">
          <script>alert(2)</script>
          <rect width="40" height="20" fill="#0000ff"/>
          <rect x="10" y="5" width="20" height="10" fill="#ff0000"/>
          <image href="http://127.0.0.2/tracker.png" width="1" height="1"/>
        </svg>
        """.utf8)

    static let red: [UInt8] = [255, 0, 0, 255]
    static let blue: [UInt8] = [0, 0, 255, 255]

    /// A source server with the flag at /flag.svg, more SVGs by `name`, and a JPEG at /photo.jpg.
    static func server(_ documents: [String: String] = [:]) async throws -> TestImageServer {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute("/flag.svg", .init(headers: [.contentType: "image/svg+xml"], body: flag))
        for (name, text) in documents { server.setRoute("/\(name).svg", .init(body: Data(text.utf8))) }
        server.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 200, height: 150))))
        return server
    }

    static func body(_ response: ServiceResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test("f:svg, no format (imgproxy's rule, whatever the Accept field), skp:svg and raw answer the sanitised SVG, with a CSP")
    func sanitisedSVG() async throws {
        let server = try await Self.server()
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder)
        for (options, accept) in [("f:svg", ""), ("rs:fit:300:300", "image/avif,image/webp,*/*"), ("skp:svg", "image/webp"), ("raw:1", "")] {
            let response = await service.respond(
                to: ServiceRequest(path: ImageServiceTests.path(options, server.url("/flag.svg")), headers: [.accept: accept]))
            #expect(response.status == 200, "\(options): \(Self.body(response))")
            #expect(response.headers[.contentType] == "image/svg+xml", "\(options)")
            #expect(response.headers[.contentSecurityPolicy] == "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
            #expect(response.headers[.contentDisposition] == "inline; filename=\"flag.svg\"")
            let text = Self.body(response)
            #expect(!text.contains("script") && !text.contains("onload") && !text.contains("tracker"), "\(options): \(text)")
            #expect(text.contains("<rect x=\"10\" y=\"5\" width=\"20\" height=\"10\" fill=\"#ff0000\"/>"), "\(options): \(text)")
        }
        #expect(server.requestCount("/tracker.png") == 0)
        try await server.shutdown()
    }

    @Test("f:png, f:webp and .jpg rasterise at the answer's size, enlarged without enlarge (as imgproxy treats vectors), edges sharp")
    func rasterised() async throws {
        let server = try await Self.server()
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder)
        let cases: [(String, String, ImageSize)] = [
            ("rs:fit:200:200/f:png", "image/png", ImageSize(width: 200, height: 100)),
            ("w:80/f:webp", "image/webp", ImageSize(width: 80, height: 40)),
            ("rs:fill:50:50/f:png", "image/png", ImageSize(width: 50, height: 50)),
            ("f:png", "image/png", ImageSize(width: 40, height: 20)),
        ]
        for (options, type, size) in cases {
            let response = await service.respond(to: ServiceRequest(path: ImageServiceTests.path(options, server.url("/flag.svg"))))
            #expect(response.status == 200 && response.headers[.contentType] == type, "\(options): \(Self.body(response))")
            let image = try ImageServiceTests.decoded(response)
            #expect(image.size == size, "\(options)")
        }
        let large = await service.respond(to: ServiceRequest(path: ImageServiceTests.path("rs:fit:200:200/f:png", server.url("/flag.svg"))))
        let image = try ImageServiceTests.decoded(large)
        #expect(FormatFixtures.rgba(image, x: 49, y: 50) == Self.blue && FormatFixtures.rgba(image, x: 50, y: 50) == Self.red)
        #expect(FormatFixtures.rgba(image, x: 100, y: 24) == Self.blue && FormatFixtures.rgba(image, x: 100, y: 25) == Self.red)
        let jpeg = await service.respond(to: ServiceRequest(path: ImageServiceTests.path("w:100", server.url("/flag.svg")) + ".jpg"))
        #expect(try jpeg.headers[.contentType] == "image/jpeg" && ImageServiceTests.decoded(jpeg).size == ImageSize(width: 100, height: 50))
        try await server.shutdown()
    }

    @Test("f:svg of a raster source, hostile and broken SVGs, and SVGs too large are refused with their status")
    func refusals() async throws {
        var laughs = "<g id=\"l0\"><rect width=\"1\" height=\"1\"/></g>"
        for level in 1...9 { laughs += "<g id=\"l\(level)\">" + String(repeating: "<use href=\"#l\(level - 1)\"/>", count: 10) + "</g>" }
        let documents = [
            "xxe": "<!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><svg xmlns=\"http://www.w3.org/2000/svg\"><text>&x;</text></svg>",
            "laughs": "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"9\" height=\"9\"><defs>\(laughs)</defs><use href=\"#l9\"/></svg>",
            "huge": "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100000\" height=\"100000\"/>",
            "broken": "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"1\"",
        ]
        let server = try await Self.server(documents)
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder)
        let cases: [(String, String, Int, String)] = [
            ("f:svg", "/photo.jpg", 422, "svg is for SVG sources only"),
            ("f:png", "/xxe.svg", 422, "external entity &x;"),
            ("f:svg", "/xxe.svg", 422, "external entity &x;"),
            ("f:png", "/laughs.svg", 422, "over the limit of 200000"),
            ("f:png", "/huge.svg", 413, "100000x100000"),
            ("f:svg", "/huge.svg", 413, "100000x100000"),
            ("f:png", "/broken.svg", 422, "unterminated tag <rect"),
            ("f:svg", "/broken.svg", 422, "unterminated tag <rect"),
        ]
        for (options, source, status, message) in cases {
            let response = await service.respond(to: ServiceRequest(path: ImageServiceTests.path(options, server.url(source))))
            #expect(response.status == status && Self.body(response).contains(message), "\(options) \(source): \(Self.body(response))")
        }
        try await server.shutdown()
    }

    @Test("thumbor rasterises an SVG source (as it does with CairoSVG) into a PNG, rendered at the URL's size")
    func thumbor() async throws {
        let server = try await Self.server()
        let service = try ImageServiceThumborTests.service()
        let source = server.url("/flag.svg").absoluteString
        for (options, size, type) in [
            ("200x100", "200x100", "image/png"), ("fit-in/100x100", "100x50", "image/png"), ("400x0", "400x200", "image/png"),
            ("60x60/filters:format(webp)", "60x60", "image/webp"), ("", "40x20", "image/png"),
        ] {
            let path = options.isEmpty ? "/thumbor/unsafe/\(source)" : "/thumbor/unsafe/\(options)/\(source)"
            let response = await service.respond(to: ServiceRequest(path: path))
            #expect(response.status == 200 && response.headers[.contentType] == type, "\(options): \(Self.body(response))")
            if response.status == 200 { #expect(try ImageServiceTests.decoded(response).size.description == size, "\(options)") }
        }
        let large = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/400x200/\(source)"))
        let image = try ImageServiceTests.decoded(large)
        #expect(FormatFixtures.rgba(image, x: 99, y: 100) == Self.blue && FormatFixtures.rgba(image, x: 100, y: 100) == Self.red)
        try await server.shutdown()
    }

    @Test("/info reports an SVG's intrinsic size and format")
    func info() async throws {
        let server = try await Self.server()
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder)
        let response = await service.respond(to: ServiceRequest(path: "/info" + ImageServiceTests.path("", server.url("/flag.svg"))))
        let info = try JSONDecoder().decode(ImageService.ImageInfo.self, from: response.body)
        #expect(info.format == "svg" && info.width == 40 && info.height == 20 && info.alpha)
        try await server.shutdown()
    }
}
