import Foundation
import Imago
import ImagoSandbox
import Testing

@testable import ImagoServer

/// `imago serve --demo`'s pages, served by the service itself over a
/// generated gallery on 127.0.0.2.
@Suite("The demo's pages: a grid of thumbnails with 1x and 2x, a page of variants per image")
struct DemoSiteTests {
    /// A gallery of `count` images served from 127.0.0.2, and a service
    /// whose demo shows it, with its cache in the returned folder.
    static func start(count: Int, signing: URLSigning? = nil) async throws -> (Gallery, TestImageServer, TemporaryDirectory, ImageService) {
        let gallery = try Gallery(count: count)
        let origin = try await TestImageServer.start(host: "127.0.0.2")
        origin.serve(gallery)
        let folder = TemporaryDirectory()
        return (gallery, origin, folder, service(gallery, origin: origin, folder: folder, signing: signing))
    }

    /// A service whose demo shows `gallery`, served from `origin`.
    static func service(_ gallery: Gallery, origin: TestImageServer, folder: TemporaryDirectory, signing: URLSigning? = nil) -> ImageService {
        let demo = DemoSite(
            sources: gallery.items.map { DemoSite.Source(url: origin.url($0.path), width: $0.width, height: $0.height) },
            signing: signing
        )
        return try! ImageService(
            configuration: .init(
                signing: signing,
                allowsUnsigned: signing == nil,
                sourcePolicy: SourcePolicy(allowedPrefixes: [origin.url("/gallery/").absoluteString], allowedNetworks: [IPNetwork("127.0.0.2/32")!]),
                cacheFolder: folder.path,
                demo: demo
            ))
    }

    /// The values of `attribute` in `html`, in order.
    static func values(of attribute: String, in html: String) -> [String] {
        html.components(separatedBy: " \(attribute)=\"").dropFirst().compactMap { $0.split(separator: "\"", maxSplits: 1).first.map(String.init) }
            .map { $0.replacingOccurrences(of: "&amp;", with: "&") }
    }

    @Test("the grid links every image's thumbnail at 1x and 2x, lazily, in the browser's best format; each answers")
    func grid() async throws {
        let (gallery, origin, folder, service) = try await Self.start(count: 6)
        defer { withExtendedLifetime(folder) {} }

        let page = await service.respond(to: ServiceRequest(path: "/"))
        #expect(page.status == 200 && page.headers[.contentType] == "text/html; charset=utf-8")
        let html = String(decoding: page.body, as: UTF8.self)
        let sources = Self.values(of: "src", in: html)
        let sourceSets = Self.values(of: "srcset", in: html)
        #expect(sources.count == gallery.items.count && sourceSets.count == gallery.items.count)
        #expect(html.components(separatedBy: "loading=\"lazy\"").count - 1 == gallery.items.count)
        #expect(Self.values(of: "href", in: html).filter { $0.hasPrefix("/demo/") } == (0..<gallery.items.count).map { "/demo/\($0)" })

        let chromeAccept = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
        for (index, (oneX, set)) in zip(sources, sourceSets).enumerated() {
            let candidates = set.components(separatedBy: ", ")
            #expect(candidates.count == 2 && candidates[0] == oneX + " 1x" && candidates[1].hasSuffix(" 2x"))
            let twoX = String(candidates[1].dropLast(3))
            let small = await service.respond(to: ServiceRequest(path: oneX, headers: [.accept: chromeAccept]))
            let large = await service.respond(to: ServiceRequest(path: twoX, headers: [.accept: "image/webp,*/*"]))
            #expect(small.status == 200 && small.headers[.contentType] == "image/avif", "\(oneX)")
            #expect(large.status == 200 && large.headers[.contentType] == "image/webp", "\(twoX)")
            let size = try ImageServiceTests.decoded(large).size
            let item = gallery.items[index]
            // 2x of a 256 px crop: 512 a side, or the source's own size when smaller (never enlarged).
            #expect(size.width == min(512, item.width) || size.height == min(512, item.height), "\(twoX): \(size.width)x\(size.height)")
        }
        let metrics = String(decoding: await service.respond(to: ServiceRequest(path: "/metrics")).body, as: UTF8.self)
        #expect(metrics.contains("imago_transformations_total \(2 * gallery.items.count)"), "\(metrics)")
        try await origin.shutdown()
    }

    @Test("an image's page shows every variant, signed when the server has keys; unknown pages are 404")
    func imagePage() async throws {
        let (_, origin, folder, service) = try await Self.start(count: 2, signing: ImageServiceTests.signing)
        defer { withExtendedLifetime(folder) {} }

        let page = await service.respond(to: ServiceRequest(path: "/demo/1"))
        #expect(page.status == 200)
        let variants = Self.values(of: "src", in: String(decoding: page.body, as: UTF8.self))
        #expect(variants.count == DemoSite.variants.count)
        var types: Set<String> = []
        for variant in variants {
            #expect(!variant.hasPrefix("/unsafe/"))
            let answer = await service.respond(to: ServiceRequest(path: variant, headers: [.accept: "image/webp"]))
            #expect(answer.status == 200, "\(variant): \(String(decoding: answer.body, as: UTF8.self))")
            types.insert(answer.headers[.contentType] ?? "")
        }
        #expect(types == ["image/jpeg", "image/png", "image/webp", "image/avif"])
        for missing in ["/demo/2", "/demo/-1", "/demo/x", "/demo/", "/demo/1/other", "/demo/1/layout/x", "/demo/2/layout"] {
            #expect(await service.respond(to: ServiceRequest(path: missing)).status == 404, "\(missing)")
        }
        try await origin.shutdown()
    }

    @Test("an image's layout page: each crop and layout answers in the size it states")
    func layoutPage() async throws {
        let (_, origin, folder, service) = try await Self.start(count: 2, signing: nil)
        defer { withExtendedLifetime(folder) {} }

        let page = await service.respond(to: ServiceRequest(path: "/demo/1/layout"))
        #expect(page.status == 200)
        let html = String(decoding: page.body, as: UTF8.self)
        let sources = Self.values(of: "src", in: html)
        let widths = Self.values(of: "data-width", in: html).compactMap { Int($0) }
        let heights = Self.values(of: "data-height", in: html).compactMap { Int($0) }
        #expect(sources.count == DemoSite.layouts.count && widths.count == sources.count && heights.count == sources.count)
        for (index, source) in sources.enumerated() {
            let path = source.replacingOccurrences(of: "&amp;", with: "&")
            let answer = await service.respond(to: ServiceRequest(path: path, headers: [.accept: "image/webp"]))
            #expect(answer.status == 200, "\(path): \(String(decoding: answer.body, as: UTF8.self))")
            let size = try ImageServiceTests.decoded(answer).size
            #expect(size == ImageSize(width: widths[index], height: heights[index]), "\(DemoSite.layouts[index].options)")
        }
        try await origin.shutdown()
    }
}
