import Foundation
import HTTPTypes
import Imago
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoServer

/// thumbor URLs end to end, beside imgproxy's on the same service.
@Suite("Image service: thumbor URLs beside imgproxy's")
struct ImageServiceThumborTests {
    static let signing = ThumborSigning(key: "MY_SECURE_KEY")

    static func service(imgproxy: Bool = true, unsafe: Bool = true) throws -> ImageService {
        try ImageService(
            configuration: .init(
                allowsUnsigned: imgproxy, sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]),
                cacheFolder: TemporaryDirectory().path, thumbor: ThumborDialect(signing: signing, allowsUnsafe: unsafe, pathPrefix: "thumbor")))
    }

    static func photoServer() async throws -> TestImageServer {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute("/land.jpg", .init(body: try JPEGEncoder(quality: 95).encode(FormatFixtures.quadrants(width: 1024, height: 768))))
        let black = Image(width: 200, height: 100, pixelFormat: .rgb8, pixels: [UInt8](repeating: 0, count: 200 * 100 * 3))!
        server.setRoute("/wm.png", .init(body: try PNGEncoder().encode(black)))
        return server
    }

    static func body(_ response: ServiceResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test("unsafe and signed thumbor URLs under the prefix: sizes, formats, max_age; imgproxy's URLs still imgproxy's")
    func answers() async throws {
        let server = try await Self.photoServer()
        let service = try Self.service()
        let source = server.url("/land.jpg").absoluteString
        for (options, size, type) in [
            ("300x200", "300x200", "image/jpeg"), ("fit-in/300x300", "300x225", "image/jpeg"),
            ("300x200/filters:format(png)", "300x200", "image/png"),
            ("300x200/filters:format(webp):quality(50)", "300x200", "image/webp"), ("-300x0/filters:rotate(90)", "225x300", "image/jpeg"),
            ("100x100:500x400/fit-in/200x200", "200x150", "image/jpeg"),
        ] {
            let response = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/\(options)/\(source)"))
            #expect(response.status == 200 && response.headers[.contentType] == type, "\(options): \(Self.body(response))")
            if response.status == 200 { #expect(try ImageServiceTests.decoded(response).size.description == size, "\(options)") }
        }
        let signed = "fit-in/300x300/\(source)"
        let ok = await service.respond(to: ServiceRequest(path: "/thumbor/\(Self.signing.signature(for: signed))/\(signed)"))
        #expect(ok.status == 200 && (try? ImageServiceTests.decoded(ok).size.description) == "300x225")
        let capped = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x200/filters:max_age(60)/\(source)"))
        let maxAge = capped.headers[.cacheControl].flatMap { $0.split(separator: "=").last.flatMap { Int($0) } }
        #expect(maxAge.map { $0 <= 60 } == true, "\(capped.headers[.cacheControl] ?? "none")")
        let watermark = "\(server.url("/wm.png").absoluteString)"
        let marked = await service.respond(
            to: ServiceRequest(path: "/thumbor/unsafe/300x200/filters:format(png):watermark(\(watermark),10,10,0)/\(source)"))
        let markedImage = try ImageServiceTests.decoded(marked)
        #expect(
            FormatFixtures.rgba(markedImage, x: 100, y: 50) == [0, 0, 0, 255] && FormatFixtures.rgba(markedImage, x: 250, y: 150) != [0, 0, 0, 255])
        let missing = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x200/filters:watermark(\(watermark)x,10,10,0)/\(source)"))
        #expect(missing.status == 404, "\(Self.body(missing))")
        let imgproxy = await service.respond(to: ServiceRequest(path: "/unsafe/rs:fit:50:50/plain/\(source)"))
        #expect(imgproxy.status == 200 && (try? ImageServiceTests.decoded(imgproxy).size.description) == "50x38")
        try await server.shutdown()
    }

    @Test("refusals: a bad signature or a refused unsafe URL is 403, a bad filter 400 naming it, another scheme or address 400 or 403")
    func refusals() async throws {
        let server = try await Self.photoServer()
        let service = try Self.service()
        let source = server.url("/land.jpg").absoluteString
        let forged = await service.respond(to: ServiceRequest(path: "/thumbor/JDzXdpAw-aFkHGp6_k93opMOxxE=/300x200/\(source)"))
        #expect(forged.status == 403 && Self.body(forged).contains("signature"))
        let strict = try Self.service(unsafe: false)
        #expect(await strict.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x200/\(source)")).status == 403)
        let unknown = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x200/filters:nosuch(1)/\(source)"))
        #expect(unknown.status == 400 && Self.body(unknown).contains("nosuch"))
        let badArgument = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x200/filters:quality(abc)/\(source)"))
        #expect(badArgument.status == 400 && Self.body(badArgument).contains("quality(abc)"))
        #expect(await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x200/file:///etc/passwd")).status == 400)
        let loopback = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/300x200/127.0.0.1/a.jpg"))
        #expect(loopback.status == 403, "\(Self.body(loopback))")
        try await server.shutdown()
    }

    @Test("/meta: thumbor's JSON, with its operations, target and focal points")
    func meta() async throws {
        let server = try await Self.photoServer()
        let service = try Self.service()
        let source = server.url("/land.jpg").absoluteString
        let quoted = ImageService.thumborImageURL(Substring(source))
        #expect(quoted == source.replacingOccurrences(of: ":", with: "%3A"))
        let expected = [
            "meta/300x200":
                #"{"thumbor": {"source": {"url": "\#(quoted)", "width": 300, "height": 200, "frameCount": 1}, "operations": [{"type": "crop", "left": 0, "top": 42, "right": 1024, "bottom": 725}, {"type": "resize", "width": 300, "height": 200}], "target": {"width": 300, "height": 200}, "focal_points": [{"x": 512, "y": 384, "z": 1.0, "height": 1, "width": 1, "origin": "alignment"}]}}"#,
            "meta/-100x-300":
                #"{"thumbor": {"source": {"url": "\#(quoted)", "width": 100, "height": 300, "frameCount": 1}, "operations": [{"type": "crop", "left": 384, "top": 0, "right": 640, "bottom": 768}, {"type": "resize", "width": 100, "height": 300}, {"type": "flip_horizontally"}, {"type": "flip_vertically"}], "target": {"width": 100, "height": 300}, "focal_points": [{"x": 512, "y": 384, "z": 1.0, "height": 1, "width": 1, "origin": "alignment"}]}}"#,
            "meta/200x300:800x700/100x100/filters:focal(300x400:400x500)":
                #"{"thumbor": {"source": {"url": "\#(quoted)", "width": 100, "height": 100, "frameCount": 1}, "operations": [{"type": "crop", "left": 200, "top": 300, "right": 800, "bottom": 700}, {"type": "crop", "left": 0, "top": 0, "right": 400, "bottom": 400}, {"type": "resize", "width": 100, "height": 100}], "target": {"width": 100, "height": 100}, "focal_points": [{"x": 150, "y": 150, "z": 10000, "height": 100, "width": 100, "origin": "Explicit"}]}}"#,
            "meta/300x200/filters:fill(red):rotate(90):proportion(0.5)":
                #"{"thumbor": {"source": {"url": "\#(quoted)", "width": 100, "height": 150, "frameCount": 1}, "operations": [{"type": "crop", "left": 0, "top": 42, "right": 1024, "bottom": 725}, {"type": "resize", "width": 300, "height": 200}], "target": {"width": 300, "height": 200}, "focal_points": [{"x": 512, "y": 384, "z": 1.0, "height": 1, "width": 1, "origin": "alignment"}]}}"#,
        ]
        for (options, json) in expected {
            let response = await service.respond(to: ServiceRequest(path: "/thumbor/unsafe/\(options)/\(source)"))
            #expect(response.status == 200 && response.headers[.contentType] == "application/json", "\(options)")
            #expect(Self.body(response) == json, "\(options)")
        }
        try await server.shutdown()
    }

    @Test("without imgproxy URLs, thumbor's are at the root")
    func root() async throws {
        let server = try await Self.photoServer()
        let service = try Self.service(imgproxy: false)
        let response = await service.respond(to: ServiceRequest(path: "/unsafe/300x0/\(server.url("/land.jpg").absoluteString)"))
        #expect(response.status == 200 && (try? ImageServiceTests.decoded(response).size.description) == "300x225", "\(Self.body(response))")
        try await server.shutdown()
    }

    @Test("the dialects are not confused: each one's URLs fed to a server of the other alone are refused, never answered as an image")
    func noConfusion() async throws {
        let server = try await Self.photoServer()
        let source = server.url("/land.jpg").absoluteString
        let imgproxyOnly = try ImageService(
            configuration: .init(
                allowsUnsigned: true, sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]),
                cacheFolder: TemporaryDirectory().path))
        let thumborOnly = try Self.service(imgproxy: false)
        let thumborURLs = [
            "300x200", "fit-in/300x300", "100x100:500x400/fit-in/200x200", "-300x-200/right/bottom", "300x200/filters:quality(50)",
            "trim/300x0", "meta/300x200", "full-fit-in/300x100/smart",
        ].map { "/unsafe/\($0)/\(source)" }
        for path in thumborURLs {
            #expect(await thumborOnly.respond(to: ServiceRequest(path: path)).status == 200, "\(path) as thumbor")
            let asImgproxy = await imgproxyOnly.respond(to: ServiceRequest(path: path))
            #expect(asImgproxy.status == 400, "\(path) as imgproxy: \(asImgproxy.status) \(Self.body(asImgproxy))")
        }
        let imgproxyURLs = [
            "/unsafe/rs:fit:50:50/plain/\(source)", "/unsafe/w:64/h:64/plain/\(source)@webp",
            "/unsafe/g:sm/rs:fill:30:30/\(URLSigning.base64URL(Array(source.utf8)))",
        ]
        for path in imgproxyURLs {
            #expect(await imgproxyOnly.respond(to: ServiceRequest(path: path)).status == 200, "\(path) as imgproxy")
            let asThumbor = await thumborOnly.respond(to: ServiceRequest(path: path))
            // Read as thumbor, the options are a host name: refused, or not found (a 502 from DNS).
            #expect(
                asThumbor.status >= 400 && asThumbor.headers[.contentType]?.hasPrefix("image/") != true, "\(path) as thumbor: \(asThumbor.status)")
        }
        try await server.shutdown()
    }
}
