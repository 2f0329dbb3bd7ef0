import Foundation
import Testing

@testable import ImagoServer

/// Which paths are thumbor's, and the sources their image parts name, as
/// thumbor's HTTP loader fetched them.
@Suite("thumbor dialect: which paths are thumbor's, and what their images fetch")
struct ThumborDialectTests {
    @Test("a host of its own, a path prefix, or the root when the server takes no imgproxy URLs")
    func routing() {
        let dialect = ThumborDialect(allowsUnsafe: true, pathPrefix: "thumbor", hosts: ["thumbor.example"])
        let path: Substring = "unsafe/300x200/land.jpg"
        #expect(dialect.thumborPath(in: path, host: "Thumbor.Example:8080", imgproxyEnabled: true) == path)
        #expect(dialect.thumborPath(in: "thumbor/" + path, host: "imago.example", imgproxyEnabled: true) == path)
        #expect(dialect.thumborPath(in: path, host: "imago.example", imgproxyEnabled: true) == nil, "imgproxy's")
        #expect(dialect.thumborPath(in: "thumbnail/" + path, host: nil, imgproxyEnabled: true) == nil)
        #expect(dialect.thumborPath(in: path, host: nil, imgproxyEnabled: false) == path, "the root, without imgproxy")
        #expect(ThumborDialect(allowsUnsafe: true, pathPrefix: nil).thumborPath(in: "thumbor/" + path, host: nil, imgproxyEnabled: true) == nil)
        #expect(
            ThumborDialect(hosts: ["thumbor.example"]).thumborPath(in: path, host: "thumbor.example", imgproxyEnabled: false) == nil,
            "off without a key or unsafe")
    }

    @Test(
        "image parts fetch what thumbor's HTTP loader fetched",
        arguments: [
            ("127.0.0.1:18894/land.jpg", "http://127.0.0.1:18894/land.jpg"),
            ("http://127.0.0.1:18894/land.jpg", "http://127.0.0.1:18894/land.jpg"),
            ("http%3A%2F%2F127.0.0.1%3A18894%2Fland.jpg", "http://127.0.0.1:18894/land.jpg"),
            ("http://127.0.0.1:18894/land.jpg%3Fx%3D1", "http://127.0.0.1:18894/land.jpg?x=1"),
            ("http://127.0.0.1:18894/sub%20dir/a%20b.jpg", "http://127.0.0.1:18894/sub%20dir/a%20b.jpg"),
            ("http%3A//127.0.0.1%3A18894/sub%2520dir/a%2520b.jpg", "http://127.0.0.1:18894/sub%20dir/a%20b.jpg"),
            ("http://127.0.0.1:18894/q%3Fx%3D1.jpg", "http://127.0.0.1:18894/q?x=1.jpg"),
            ("http://127.0.0.1:18894/q%253Fx%253D1.jpg", "http://127.0.0.1:18894/q%3Fx%3D1.jpg"),
            ("https://images.example/a.jpg", "https://images.example/a.jpg"),
        ])
    func sources(image: String, url: String) {
        #expect(ThumborDialect().sourceURL(for: Substring(image))?.absoluteString == url)
    }

    @Test("with a source base, a relative image is below it and an absolute one is itself")
    func sourceBase() {
        let dialect = ThumborDialect(sourceBase: URL(string: "https://origin.example/assets/")!)
        #expect(dialect.sourceURL(for: "images/a%20b.jpg")?.absoluteString == "https://origin.example/assets/images/a%20b.jpg")
        #expect(dialect.sourceURL(for: "/images/a.jpg")?.absoluteString == "https://origin.example/assets/images/a.jpg")
        #expect(dialect.sourceURL(for: "https://elsewhere.example/a.jpg")?.absoluteString == "https://elsewhere.example/a.jpg")
        #expect(dialect.sourceURL(for: "") == nil && dialect.sourceURL(for: "%FF") == nil)
        #expect(dialect.sourceURL(for: "file:///etc/passwd") == nil && ThumborDialect().sourceURL(for: "file%3A%2F%2F%2Fetc%2Fpasswd") == nil)
        #expect(ThumborDialect().sourceURL(for: "localhost:8080/a.jpg")?.absoluteString == "http://localhost:8080/a.jpg")
    }
}
