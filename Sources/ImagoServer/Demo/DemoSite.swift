import Foundation
import Hummingbird
import NIOCore

/// The pages of `imago serve --demo`: at `/` a grid of thumbnails of the
/// demo's source images (1x and 2x through `srcset`, loaded lazily, in the
/// format the browser accepts best), at `/demo/N` the variants of image N,
/// and at `/demo/N/layout` its crops and layouts (gravity, focus point,
/// smart crop, extension, padding, rotation, filters), each of a size
/// known in advance. The image URLs are the service's own, signed when the service has
/// keys, else unsigned, so the pages show what a client would build.
public struct DemoSite: Sendable {
    /// One source image of the demo.
    public struct Source: Sendable {
        public var url: URL
        public var width: Int
        public var height: Int

        public init(url: URL, width: Int, height: Int) {
            self.url = url
            self.width = width
            self.height = height
        }
    }

    /// The variants each image's page shows: a caption and the options.
    static let variants: [(String, String)] = [
        ("fit in 512x512", "rs:fit:512:512/f:auto"),
        ("cropped to 400x200", "rs:fill:400:200/f:auto"),
        ("gray", "w:320/imago_gray:1/f:auto"),
        ("blurred", "w:320/bl:3/f:auto"),
        ("rounded corners", "rs:fill:320:320/imago_radius:40/f:auto"),
        ("JPEG", "w:320/f:jpeg/q:80"),
        ("PNG", "w:320/f:png"),
        ("WebP", "w:320/f:webp/q:80"),
        ("AVIF", "w:320/f:avif/q:60"),
    ]

    /// The crops and layouts `/demo/N/layout` shows: a caption, the
    /// options, and the answer's size, the same for any source (each
    /// enlarges what is smaller).
    static let layouts: [(caption: String, options: String, width: Int, height: Int)] = [
        ("fill, gravity north", "rs:fill:300:150:1/g:no", 300, 150),
        ("fill, gravity south-east", "rs:fill:300:150:1/g:soea", 300, 150),
        ("focus point at (0.25, 0.75)", "rs:fill:200:200:1/g:fp:0.25:0.75", 200, 200),
        ("smart crop", "rs:fill:200:200:1/g:sm", 200, 200),
        ("top-left quarter, then filled", "c:0.5:0.5:nowe/rs:fill:200:200:1", 200, 200),
        ("fit, extended on blue", "rs:fit:300:300:1:1/bg:336699", 300, 300),
        ("padding on gray", "rs:fill:200:200:1/pd:20:40/bg:dddddd", 280, 240),
        ("turned a quarter, mirrored", "rs:fill:300:150:1/rot:90/fl:1", 300, 150),
        ("pixelated", "rs:fill:200:200:1/pix:12", 200, 200),
        ("sharpened", "rs:fill:200:200:1/sh:1.5", 200, 200),
        ("dpr 2", "rs:fill:100:50:1/dpr:2", 200, 100),
        ("zoom 2", "rs:fill:100:100:1/z:2", 200, 200),
        ("forced to 300x100", "rs:force:300:100:1", 300, 100),
    ]

    static let thumbnailSide = 256

    public let sources: [Source]
    private let signing: URLSigning?

    /// Pages for `sources`; URLs are signed with `signing`'s first key when
    /// given, else marked `unsafe`.
    public init(sources: [Source], signing: URLSigning? = nil) {
        self.sources = sources
        self.signing = signing
    }

    /// Adds the pages to `router`: the grid at `/`, image N's variants at
    /// `/demo/N` (404 for a number with no image).
    func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("/") { _, _ in Self.html(index()) }
        router.get("demo/**") { request, _ in
            let parts = request.uri.path.dropFirst("/demo/".count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let number = Int(parts[0]), sources.indices.contains(number) else {
                throw ServiceError(.notFound, "no such demo page")
            }
            switch parts.count == 2 ? parts[1] : nil {
            case nil: return Self.html(imagePage(number))
            case "layout": return Self.html(layoutPage(number))
            default: throw ServiceError(.notFound, "no such demo page")
            }
        }
        router.get("demo") { _, _ -> Response in throw ServiceError(.notFound, "no such demo page") }
    }

    /// The service's URL for `source` with `options`.
    func imageURL(_ source: Source, options: String) -> String {
        let rest = "/" + options + "/" + URLSigning.base64URL(Array(source.url.absoluteString.utf8))
        return "/" + (signing?.signature(for: rest) ?? "unsafe") + rest
    }

    private func index() -> String {
        let side = Self.thumbnailSide
        let items = sources.enumerated().map { number, source in
            let options = "rs:fill:\(side):\(side)"
            let oneX = imageURL(source, options: options + "/f:auto")
            let twoX = imageURL(source, options: options + "/dpr:2/f:auto")
            return """
                <a href="/demo/\(number)"><img class="thumb" src="\(Self.escaped(oneX))" srcset="\(Self.escaped(oneX)) 1x, \(Self.escaped(twoX)) 2x" \
                loading="lazy" width="\(side)" height="\(side)" alt="image \(number), \(source.width)x\(source.height)"></a>
                """
        }
        return Self.document(
            title: "Imago demo",
            body: """
                <h1>Imago demo</h1>
                <p>\(sources.count) images from a local source, as \(side) px thumbnails made by <code>imago serve</code> \
                in the best format this browser accepts. Choose one for its variants; <a href="/metrics">/metrics</a> counts \
                what was transformed and what came from the result cache.</p>
                <div class="grid">
                \(items.joined(separator: "\n"))
                </div>
                """
        )
    }

    private func imagePage(_ number: Int) -> String {
        let source = sources[number]
        let figures = Self.variants.map { caption, options in
            """
            <figure><img class="variant" src="\(Self.escaped(imageURL(source, options: options)))" alt="\(caption)">\
            <figcaption>\(caption)<br><code>\(options)</code></figcaption></figure>
            """
        }
        return Self.document(
            title: "Imago demo: image \(number)",
            body: """
                <p><a href="/">All images</a></p>
                <h1>Image \(number)</h1>
                <p>Source: <a href="\(Self.escaped(source.url.absoluteString))">\(Self.escaped(source.url.lastPathComponent))</a>, \
                \(source.width)x\(source.height). <a href="/demo/\(number)/layout">Crops and layouts</a>.</p>
                <div class="variants">
                \(figures.joined(separator: "\n"))
                </div>
                """
        )
    }

    private func layoutPage(_ number: Int) -> String {
        let source = sources[number]
        let figures = Self.layouts.map { layout in
            let url = Self.escaped(imageURL(source, options: layout.options + "/f:auto"))
            return """
                <figure><img class="layout" src="\(url)" width="\(layout.width)" height="\(layout.height)" \
                data-width="\(layout.width)" data-height="\(layout.height)" alt="\(layout.caption)">\
                <figcaption>\(layout.caption)<br><code>\(layout.options)</code></figcaption></figure>
                """
        }
        return Self.document(
            title: "Imago demo: image \(number), crops and layouts",
            body: """
                <p><a href="/">All images</a> · <a href="/demo/\(number)">Image \(number)</a></p>
                <h1>Image \(number): crops and layouts</h1>
                <p>imgproxy's options, each answer \(source.width)x\(source.height) made into the size shown.</p>
                <div class="variants">
                \(figures.joined(separator: "\n"))
                </div>
                """
        )
    }

    private static func document(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        <style>
        body { font-family: system-ui, sans-serif; margin: 1.5rem; background: #f4f4f2; color: #222; }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(128px, 1fr)); gap: 8px; }
        .grid img { width: 100%; height: auto; aspect-ratio: 1; object-fit: cover; display: block; border-radius: 4px; background: #ddd; }
        .variants { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-end; }
        figure { margin: 0; } figcaption { font-size: 0.8rem; color: #555; }
        </style></head>
        <body>
        \(body)
        </body></html>

        """
    }

    private static func html(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
