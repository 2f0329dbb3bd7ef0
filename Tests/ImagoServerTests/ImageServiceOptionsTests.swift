import Foundation
import HTTPTypes
import Imago
import ImagoCaching
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoServer

/// imgproxy's options as the service answers them: formats from the
/// source's extension, header fields (file name, attachment, expiry),
/// pass-through (`raw`, `skp`), qualities and `mb`, presets, watermark,
/// source limits, and `/info`.
@Suite("Image service: imgproxy's options end to end")
struct ImageServiceOptionsTests {
    static let webpAccept: HTTPFields = [.accept: "image/webp,*/*"]

    static func service(in folder: TemporaryDirectory, _ change: (inout ImageService.Configuration) -> Void = { _ in }) throws -> ImageService {
        var configuration = ImageService.Configuration(
            signing: ImageServiceTests.signing, allowsUnsigned: true, sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]),
            cacheFolder: folder.path)
        change(&configuration)
        return try ImageService(configuration: configuration)
    }

    static func plain(_ options: String, _ source: URL, signature: String = "unsafe") -> String {
        let rest = "/" + (options.isEmpty ? "" : options + "/") + "plain/" + source.absoluteString
        return "/" + (signature == "sign" ? ImageServiceTests.signing.signature(for: rest) : signature) + rest
    }

    static func photoServer() async throws -> (TestImageServer, Data) {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let jpeg = try JPEGEncoder(quality: 95).encode(FormatFixtures.quadrants(width: 200, height: 150))
        server.setRoute("/photo.jpg", .init(headers: ImageServiceTests.cacheable, body: jpeg))
        server.setRoute("/alpha.png", .init(body: try PNGEncoder().encode(FormatFixtures.quadrants(width: 80, height: 60, alpha: true))))
        return (server, jpeg)
    }

    static func body(_ response: ServiceResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test("the format from @ext and .ext, GIF and JPEG XL too; an unknown one is a 400, one Imago does not write a 422")
    func extensions() async throws {
        let (server, _) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let service = try Self.service(in: folder)
        let source = server.url("/photo.jpg")
        for (path, type) in [
            (Self.plain("w:50", source) + "@png", "image/png"), (Self.plain("w:50/f:jpeg", source) + "@webp", "image/webp"),
            (ImageServiceTests.path("w:50", source) + ".png", "image/png"), (ImageServiceTests.path("w:50", source) + ".jpg", "image/jpeg"),
        ] {
            let response = await service.respond(to: ServiceRequest(path: path, headers: Self.webpAccept))
            #expect(response.status == 200 && response.headers[.contentType] == type, "\(path): \(Self.body(response))")
            #expect(response.headers[.vary] == nil, "a named format does not vary")
        }
        let unknown = await service.respond(to: ServiceRequest(path: Self.plain("w:50", source) + "@tga"))
        #expect(unknown.status == 400 && Self.body(unknown).contains("tga"))
        for (format, type) in [("gif", "image/gif"), ("jxl", "image/jxl")] {
            let written = await service.respond(to: ServiceRequest(path: Self.plain("w:50/f:\(format)", source)))
            #expect(written.status == 200 && written.headers[.contentType] == type, "\(format): \(Self.body(written))")
        }
        for format in ["tiff", "bmp", "ico", "heic", "svg"] {
            let refused = await service.respond(to: ServiceRequest(path: Self.plain("w:50/f:\(format)", source)))
            #expect(refused.status == 422 && Self.body(refused).contains(format), "\(format): \(Self.body(refused))")
        }
        try await server.shutdown()
    }

    @Test("Content-Disposition: the source's name or fn's, the answer's extension, att for an attachment")
    func contentDisposition() async throws {
        let (server, _) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let service = try Self.service(in: folder)
        let source = server.url("/photo.jpg")
        for (options, expected) in [
            ("w:50/f:webp", "inline; filename=\"photo.webp\""), ("w:50/f:png/att:1", "attachment; filename=\"photo.png\""),
            ("w:50/f:png/fn:holiday", "inline; filename=\"holiday.png\""),
            ("w:50/f:png/fn:\(URLSigning.base64URL(Array("a \"b\"".utf8))):1", "inline; filename=\"a %22b%22.png\""),
            ("w:50/f:png/fn:\(URLSigning.base64URL(Array("été".utf8))):1", "inline; filename=\"_t_.png\"; filename*=UTF-8''%C3%A9t%C3%A9.png"),
        ] {
            let response = await service.respond(to: ServiceRequest(path: Self.plain(options, source)))
            #expect(response.headers[.contentDisposition] == expected, "\(options)")
        }
        for (url, name) in [
            ("http://h/a/b%20c.jpg?x=1", "b c"), ("http://h/", ""), ("http://h", ""), ("http://h/a.b.c", "a.b"), ("http://h/.hidden", ".hidden"),
            ("http://h/dir/x#frag.jpg", "x"), ("https://h:8080/p/q.png?a=/b.jpg", "q"), ("http://h/%zz.jpg", "%zz"),
        ] {
            #expect(ImageService.baseName(of: url) == name, "\(url)")
        }
        // A raw answer keeps the source's media type: ICO's is not image/ and its name.
        for (mediaType, fileExtension) in [("image/x-icon", ".ico"), ("image/tiff", ".tiff"), ("image/bmp", ".bmp"), ("text/html", "")] {
            #expect(ImageService.fileExtension(of: mediaType) == fileExtension, "\(mediaType)")
        }
        // A source path without a name: imgproxy's fallback, "image".
        server.setRoute("/", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants())))
        let bare = await service.respond(to: ServiceRequest(path: Self.plain("w:50/f:png", server.url("/"))))
        #expect(bare.headers[.contentDisposition] == "inline; filename=\"image.png\"")
        try await server.shutdown()
    }

    @Test("exp: a URL past its time is a 404 (as imgproxy), checked after the signature; a later one caps the max-age")
    func expiry() async throws {
        let (server, _) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let service = try Self.service(in: folder)
        let source = server.url("/photo.jpg")
        let now = Int(Date().timeIntervalSince1970)
        let expired = await service.respond(to: ServiceRequest(path: Self.plain("w:50/exp:\(now - 10)", source, signature: "sign")))
        #expect(expired.status == 404 && Self.body(expired).contains("expired"), "\(Self.body(expired))")
        // A bad signature is a 403 before any option is read, expired or malformed.
        for options in ["w:50/exp:\(now - 10)", "bogus:1"] {
            #expect(await service.respond(to: ServiceRequest(path: Self.plain(options, source, signature: "AAAA"))).status == 403)
        }
        // The max-age is what is left until exp when the answer is made: between
        // what was left before the request and what is left after it, however
        // long the request took (the machine may be slow).
        let expires = Int(Date().timeIntervalSince1970) + 600
        let before = expires - Int(Date().timeIntervalSince1970)
        let soon = await service.respond(to: ServiceRequest(path: Self.plain("w:50/f:png/exp:\(expires)", source, signature: "sign")))
        let after = expires - Int(Date().timeIntervalSince1970)
        let maxAge = soon.headers[.cacheControl].flatMap { Int($0.split(separator: "=").last ?? "") } ?? -1
        #expect(soon.status == 200 && (after - 1...before).contains(maxAge), "\(soon.headers[.cacheControl] ?? ""), \(after)...\(before)")
        try await server.shutdown()
    }

    @Test("raw answers the source as it came; skp does for the formats it names unless f asks for another")
    func passThrough() async throws {
        let (server, jpeg) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let service = try Self.service(in: folder)
        let source = server.url("/photo.jpg")
        let raw = await service.respond(to: ServiceRequest(path: Self.plain("w:50/raw:1", source) + "@png", headers: Self.webpAccept))
        #expect(raw.status == 200 && raw.body == jpeg && raw.headers[.contentType] == "image/jpeg" && raw.headers[.vary] == nil)
        let skipped = await service.respond(to: ServiceRequest(path: Self.plain("w:50/skp:jpg", source), headers: Self.webpAccept))
        #expect(skipped.body == jpeg && skipped.headers[.contentType] == "image/jpeg")
        let named = await service.respond(to: ServiceRequest(path: Self.plain("w:50/skp:jpg/f:png", source)))
        #expect(named.headers[.contentType] == "image/png")
        #expect(try ImageServiceTests.decoded(named).width == 50)
        let other = await service.respond(to: ServiceRequest(path: Self.plain("w:50/skp:png", source), headers: Self.webpAccept))
        #expect(other.headers[.contentType] == "image/webp")
        try await server.shutdown()
    }

    @Test("quality: q, then fq for the format, then the service's per-format and default; mb lowers it until the answer fits")
    func quality() async throws {
        let (server, _) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let service = try Self.service(in: folder) { $0.formatQuality = [.webp: 10] }
        let source = server.url("/photo.jpg")
        func size(_ options: String) async -> Int { await service.respond(to: ServiceRequest(path: Self.plain(options, source))).body.count }
        let low = await size("w:200/f:jpeg/q:10")
        let high = await size("w:200/f:jpeg/q:95")
        #expect(low < high)
        #expect(await size("w:200/f:jpeg/fq:jpeg:10") == low, "fq names the format's quality")
        #expect(await size("w:200/f:jpeg/fq:jpeg:10/q:95") == high, "q wins over fq")
        #expect(await size("w:200/f:webp") == size("w:200/f:webp/q:10"), "the service's webp quality")
        let limit = (low + high) / 2
        let fitted = await service.respond(to: ServiceRequest(path: Self.plain("w:200/f:jpeg/q:95/mb:\(limit)", source)))
        #expect(fitted.status == 200 && fitted.body.count <= limit && fitted.body.count > 0, "\(fitted.body.count) > \(limit)")
        // PNG has no quality: its answer is as large as it is.
        #expect(await size("w:200/f:png/mb:100") == size("w:200/f:png"))
        try await server.shutdown()
    }

    @Test("presets: the default preset, pr, and presets-only URLs")
    func presets() async throws {
        let (server, _) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let presets = try Presets(lines: ["default=f:png", "thumb=rs:fill:40:30", "webp=f:webp"])
        let service = try Self.service(in: folder) { $0.presets = presets }
        let source = server.url("/photo.jpg")
        let byDefault = await service.respond(to: ServiceRequest(path: Self.plain("w:50", source)))
        #expect(byDefault.headers[.contentType] == "image/png")
        let thumb = await service.respond(to: ServiceRequest(path: Self.plain("pr:thumb:webp", source)))
        #expect(thumb.headers[.contentType] == "image/webp")
        #expect(try ImageServiceTests.decoded(thumb).size == ImageSize(width: 40, height: 30))
        let only = try Self.service(in: TemporaryDirectory()) {
            $0.presets = presets
            $0.presetsOnly = true
        }
        let named = await only.respond(to: ServiceRequest(path: Self.plain("thumb:webp", source)))
        #expect(named.status == 200)
        #expect(try ImageServiceTests.decoded(named).size == ImageSize(width: 40, height: 30))
        let options = await only.respond(to: ServiceRequest(path: Self.plain("w:50", source)))
        #expect(options.status == 400 && Self.body(options).contains("unknown preset"), "\(Self.body(options))")
        try await server.shutdown()
    }

    @Test("watermark: a 400 without one; the operator's file drawn where wm says")
    func watermark() async throws {
        let (server, _) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let source = server.url("/photo.jpg")
        let none = try Self.service(in: folder)
        let refused = await none.respond(to: ServiceRequest(path: Self.plain("w:100/wm:1", source)))
        #expect(refused.status == 400 && Self.body(refused).contains("watermark"))
        let file = folder.path + "/mark.png"
        let black = try #require(Image(width: 20, height: 10, pixelFormat: .rgb8, pixels: [UInt8](repeating: 0, count: 600)))
        try PNGEncoder().encode(black).write(to: URL(fileURLWithPath: file))
        let marked = try Self.service(in: TemporaryDirectory()) { $0.watermark = .file(file) }
        let response = await marked.respond(to: ServiceRequest(path: Self.plain("w:100/f:png/wm:1:soea", source)))
        let image = try ImageServiceTests.decoded(response)
        #expect(FormatFixtures.rgba(image, x: 95, y: 70) == [0, 0, 0, 255])
        #expect(FormatFixtures.rgba(image, x: 5, y: 5) != [0, 0, 0, 255])
        #expect(throws: ConfigurationError.self) { try Self.service(in: TemporaryDirectory()) { $0.watermark = .file(folder.path + "/missing.png") } }
        try await server.shutdown()
    }

    @Test("source limits: a 403 unless allowed; then msfs, msr and mrd bound this URL's work")
    func sourceLimits() async throws {
        let (server, jpeg) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let source = server.url("/photo.jpg")
        let strict = try Self.service(in: folder)
        #expect(await strict.respond(to: ServiceRequest(path: Self.plain("w:50/msfs:10", source))).status == 403)
        let open = try Self.service(in: TemporaryDirectory()) { $0.allowsSourceLimits = true }
        #expect(await open.respond(to: ServiceRequest(path: Self.plain("w:50/msfs:\(jpeg.count - 1)", source))).status == 413)
        #expect(await open.respond(to: ServiceRequest(path: Self.plain("w:50/msfs:\(jpeg.count)", source))).status == 200)
        #expect(await open.respond(to: ServiceRequest(path: Self.plain("w:50/msr:0.01", source))).status == 413)
        let limited = await open.respond(to: ServiceRequest(path: Self.plain("w:150/f:png/mrd:60", source)))
        #expect(try ImageServiceTests.decoded(limited).size == ImageSize(width: 60, height: 45))
        try await server.shutdown()
    }

    @Test("metadata: copyright only by default, everything with sm:0, nothing with kcr:0, the ICC profile with scp:0; EXIF set upright")
    func metadata() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let fields = [0x010F: "Example Camera", 0x013B: "Ann Example", 0x8298: "(c) 2026 Ann Example"]
        let full = ImageMetadata(
            exif: MetadataFixtures.exif(orientation: 6, fields: fields), xmp: MetadataFixtures.xmp(creator: "Ann Example"),
            iptc: MetadataFixtures.photoshopResources(iptc: [(2, 25, "harbour"), (2, 116, "(c) 2026 Ann Example")]),
            iccProfile: MetadataFixtures.iccProfile(size: 3_000)
        )
        server.setRoute(
            "/tagged.jpg", .init(body: try JPEGEncoder(quality: 90, metadata: full).encode(FormatFixtures.quadrants(width: 200, height: 150))))
        let service = try Self.service(in: TemporaryDirectory())
        let source = server.url("/tagged.jpg")
        let upright = ImageMetadata(exif: MetadataFixtures.exif(orientation: 1, fields: fields), xmp: full.xmp, iptc: full.iptc)
        var withProfile = upright
        withProfile.iccProfile = full.iccProfile
        var turnedByViewer = upright
        turnedByViewer.exif = full.exif
        var inWebP = withProfile
        inWebP.iptc = nil
        for (options, expected) in [
            ("w:50/f:jpg", full.keepingCopyrightOnly().removingProfile), ("w:50/f:jpg/kcr:0", ImageMetadata()),
            ("w:50/f:jpg/sm:0", upright), ("w:50/f:jpg/sm:0/scp:0", withProfile), ("w:50/f:jpg/sm:0/ar:0", turnedByViewer),
            ("w:50/f:jpg/kcr:0/scp:0", ImageMetadata(iccProfile: full.iccProfile)), ("w:50/f:webp/sm:0/scp:0", inWebP),
        ] {
            let response = await service.respond(to: ServiceRequest(path: Self.plain(options, source)))
            #expect(response.status == 200, "\(options): \(Self.body(response))")
            #expect(ImageMetadata(reading: response.body) == expected, "\(options)")
        }
        try await server.shutdown()
    }

    @Test("colour: an Adobe RGB source is converted to sRGB and answered without its profile; scp:0 keeps both as stored")
    func colorProfile() async throws {
        // Given a JPEG whose pixels are Adobe RGB (Debian's libgs-common profile)
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let profile = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/ghostscript/a98.icc"))
        let stored = Image(width: 64, height: 48, pixelFormat: .rgb8, pixels: [UInt8]((0..<(64 * 48)).flatMap { _ in [200, 60, 40] }))!
        server.setRoute("/adobe.jpg", .init(body: try JPEGEncoder(quality: 95, metadata: ImageMetadata(iccProfile: profile)).encode(stored)))
        let service = try Self.service(in: TemporaryDirectory())
        let source = server.url("/adobe.jpg")
        // When answered by default, and with scp:0
        let converted = await service.respond(to: ServiceRequest(path: Self.plain("w:32/f:png", source)))
        let kept = await service.respond(to: ServiceRequest(path: Self.plain("w:32/f:png/scp:0", source)))
        // Then the default answer holds sRGB pixels (a more saturated red) and no profile
        #expect(converted.status == 200 && kept.status == 200)
        let convertedPixel = try PNGDecoder().decode(converted.body, options: .init(convertsToSRGB: false)).pixels.prefix(3)
        #expect(convertedPixel[0] > 215 && ImageMetadata(reading: converted.body).iccProfile == nil, "\(Array(convertedPixel))")
        // And scp:0 answers the stored pixels with the profile that shows them right
        let keptPixel = try PNGDecoder().decode(kept.body, options: .init(convertsToSRGB: false)).pixels.prefix(3)
        #expect(abs(Int(keptPixel[0]) - 200) <= 3 && ImageMetadata(reading: kept.body).iccProfile == profile, "\(Array(keptPixel))")
        try await server.shutdown()
    }

    @Test("eth: a HEIC's embedded thumbnail is the source when asked; the image otherwise")
    func embeddedThumbnail() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        let folder = TemporaryDirectory()
        let heic = try FormatFixtures.heic(
            FormatFixtures.quadrants(width: 256, height: 192), directory: URL(fileURLWithPath: folder.path), thumbnailBox: 64)
        server.setRoute("/camera.heic", .init(body: heic))
        let service = try Self.service(in: TemporaryDirectory())
        for (options, size) in [
            ("f:png", ImageSize(width: 256, height: 192)), ("f:png/eth:1", ImageSize(width: 64, height: 48)),
            ("w:32/f:png/eth:1", ImageSize(width: 32, height: 24)),
        ] {
            let response = await service.respond(to: ServiceRequest(path: Self.plain(options, server.url("/camera.heic"))))
            #expect(try ImageServiceTests.decoded(response).size == size, "\(options): \(Self.body(response))")
        }
        try await server.shutdown()
    }

    @Test("/info: size, format, bytes, alpha, frames, orientation and a ThumbHash, signed like images, cached")
    func info() async throws {
        let (server, jpeg) = try await Self.photoServer()
        let folder = TemporaryDirectory()
        let service = try Self.service(in: folder) { $0.allowsUnsigned = false }
        let path = "/info" + Self.plain("", server.url("/photo.jpg"), signature: "sign")
        let response = await service.respond(to: ServiceRequest(path: path))
        #expect(response.status == 200 && response.headers[.contentType] == "application/json", "\(Self.body(response))")
        let info = try JSONDecoder().decode(ImageService.ImageInfo.self, from: response.body)
        #expect(info.width == 200 && info.height == 150 && info.format == "jpeg" && info.bytes == jpeg.count)
        #expect(!info.alpha && info.frames == 1 && info.orientation == 1)
        let hash = try #require(Data(base64Encoded: info.thumbhash))
        #expect(ThumbHash.approximateAspectRatio(of: Array(hash)).map { abs($0 - 4.0 / 3) < 0.2 } == true)
        let again = await service.respond(to: ServiceRequest(path: path))
        #expect(again.body == response.body && ImageServiceTests.resultCacheHits(service) == 1)

        let png = await service.respond(to: ServiceRequest(path: "/info" + Self.plain("", server.url("/alpha.png"), signature: "sign")))
        let pngInfo = try JSONDecoder().decode(ImageService.ImageInfo.self, from: png.body)
        #expect(pngInfo.alpha && pngInfo.width == 80 && pngInfo.format == "png")
        #expect(await service.respond(to: ServiceRequest(path: "/info" + Self.plain("", server.url("/photo.jpg")))).status == 403)
        #expect(
            await service.respond(to: ServiceRequest(path: "/info" + Self.plain("bogus:1", server.url("/photo.jpg"), signature: "sign"))).status
                == 400)
        try await server.shutdown()
    }
}

extension ImageMetadata {
    /// The same without the ICC profile.
    fileprivate var removingProfile: ImageMetadata {
        var copy = self
        copy.iccProfile = nil
        return copy
    }
}
