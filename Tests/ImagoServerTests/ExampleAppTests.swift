import Foundation
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoServer

/// Examples/ImageHost, the app that mounts the image service's routes at
/// /images beside its own, run as a process and asked over HTTP.
@Suite("The example app: an app's own routes and the image service's at /images")
struct ExampleAppTests {
    @Test("its own page answers; signed image URLs below /images are thumbnails; unsigned, tampered and refused ones are 403")
    func mountedRoutes() async throws {
        // Given a source on 127.0.0.2 and the app started with that network opened and a signing key
        let source = try await TestImageServer.start(host: "127.0.0.2")
        source.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 200, height: 150))))
        let folder = TemporaryDirectory()
        let signing = try URLSigning(hexKeys: "0a0b0c", hexSalts: "0d0e")
        let app = try ChildProcess(
            "ImageHost", arguments: ["--port", "0", "--cache", folder.path, "--allow-network", "127.0.0.2/32"],
            environment: ["IMAGO_KEY": "0a0b0c", "IMAGO_SALT": "0d0e"]
        )
        defer { app.stop() }
        let base = try #require(URL(string: try await app.firstLine().replacingOccurrences(of: "listening on ", with: "")))
        let client = Patient.loader()

        // When its own route and its image routes are asked for
        let page = try await client.loadData(for: DataRequest(url: base)) { _ in }
        func image(_ options: String, _ url: URL, signed: Bool = true) -> URL {
            let rest = "/" + options + "/" + URLSigning.base64URL(Array(url.absoluteString.utf8))
            return URL(string: "images/" + (signed ? signing.signature(for: rest) : "unsafe") + rest, relativeTo: base)!.absoluteURL
        }
        let thumbnail = try await client.loadData(for: DataRequest(url: image("w:50/f:png", source.url("/photo.jpg")))) { _ in }

        // Then the page is the app's, and the thumbnail the service's
        #expect(String(decoding: page.data, as: UTF8.self).hasPrefix("An app with images at /images/"))
        #expect(thumbnail.headers[.contentType] == "image/png")
        let decoded = try ImagePipeline.decode(thumbnail.data, options: ImageDecodingOptions(), decoders: ImagePipeline.Configuration().decoders)
        #expect(decoded.size == ImageSize(width: 50, height: 38))
        #expect(source.requestCount("/photo.jpg") == 1)

        // And what the service refuses is refused below /images too
        let tampered = URL(string: image("w:50/f:png", source.url("/photo.jpg")).absoluteString.replacingOccurrences(of: "w:50", with: "w:51"))!
        let refused = [image("w:50", source.url("/photo.jpg"), signed: false), tampered, image("w:50", URL(string: "http://127.0.0.1/a.jpg")!)]
        for url in refused {
            let answer = try await client.loadData(for: DataRequest(url: url)) { _ in }
            #expect(answer.statusCode == 403, "\(url)")
        }
        try await client.shutdown()
        try await source.shutdown()
    }
}
