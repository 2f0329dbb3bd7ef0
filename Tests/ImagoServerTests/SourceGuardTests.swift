import Foundation
import Imago
import ImagoSandbox
import Testing

@testable import ImagoServer

/// Every request here aims at loopback only: 127.0.0.2 is the one opened
/// source network, and other loopback spellings stand for refused addresses.
/// A listener on 127.0.0.1 counts connections, so "refused" is shown to
/// mean "never connected".
@Suite("Source guard: refused addresses are never connected to, redirects included")
struct SourceGuardTests {
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")!

    /// A loader guarded by the default policy with 127.0.0.2/32 opened.
    static func guardedLoader() -> HTTPDataLoader {
        let policy = SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!])
        return HTTPDataLoader(configuration: .init(connectTimeout: .seconds(30), sourceGuard: PolicySourceGuard(policy: policy)))
    }

    @Test("the opened network loads; loopback in every spelling is refused and never connected to")
    func spellings() async throws {
        let allowed = try await TestImageServer.start(host: "127.0.0.2")
        let refused = try await TestImageServer.start(host: "127.0.0.1")
        for server in [allowed, refused] { server.setRoute("/a.png", .init(body: Self.png)) }
        let loader = Self.guardedLoader()
        let port = refused.port
        let loaded = try await loader.loadData(for: DataRequest(url: allowed.url("/a.png"))) { _ in }
        #expect(loaded.data == Self.png)

        let spellings = [
            "http://127.0.0.1:\(port)/a.png", "http://2130706433:\(port)/a.png", "http://0x7f.1:\(port)/a.png",
            "http://0177.0.0.1:\(port)/a.png", "http://127.1:\(port)/a.png", "http://localhost:\(port)/a.png",
            "http://[::1]:\(port)/a.png", "http://[::ffff:127.0.0.1]:\(port)/a.png", "http://0.0.0.0:\(port)/a.png",
            "http://127.0.0.3:\(port)/a.png",
        ]
        for spelling in spellings {
            let error = await #expect(throws: DataLoadingError.self, "\(spelling)") {
                _ = try await loader.loadData(for: DataRequest(url: URL(string: spelling)!)) { _ in }
            }
            guard case .refused(let reason) = error?.code else {
                Issue.record("\(spelling): \(String(describing: error))")
                continue
            }
            #expect(reason.contains("refused"), "\(reason)")
        }
        #expect(refused.connectionCount == 0)
        try await allowed.shutdown()
        try await refused.shutdown()
    }

    @Test("a redirect from the allowed source to a refused address is refused before connecting")
    func redirect() async throws {
        let allowed = try await TestImageServer.start(host: "127.0.0.2")
        let refused = try await TestImageServer.start(host: "127.0.0.1")
        refused.setRoute("/secret.png", .init(body: Self.png))
        allowed.setRoute("/hop", .redirect(to: "http://localhost:\(refused.port)/secret.png"))
        allowed.setRoute("/local", .redirect(to: "/a.png", status: 301))
        allowed.setRoute("/a.png", .init(body: Self.png))
        allowed.setRoute("/loop", .redirect(to: "/loop"))
        let loader = Self.guardedLoader()

        let error = await #expect(throws: DataLoadingError.self) {
            _ = try await loader.loadData(for: DataRequest(url: allowed.url("/hop"))) { _ in }
        }
        guard case .refused = error?.code else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(allowed.requestCount("/hop") == 1)
        #expect(refused.connectionCount == 0)

        // Redirects within the allowed source are followed, loops are not.
        let followed = try await loader.loadData(for: DataRequest(url: allowed.url("/local"))) { _ in }
        #expect(followed.data == Self.png && followed.url == allowed.url("/a.png"))
        let loop = await #expect(throws: DataLoadingError.self) {
            _ = try await loader.loadData(for: DataRequest(url: allowed.url("/loop"))) { _ in }
        }
        #expect(loop?.code == .tooManyRedirects)
        try await allowed.shutdown()
        try await refused.shutdown()
    }

    @Test("the connection goes to the address the guard approved, not to a second DNS answer")
    func pinning() async throws {
        let allowed = try await TestImageServer.start(host: "127.0.0.2")
        allowed.setRoute("/a.png", .init(body: Self.png))
        // "localhost" resolves to 127.0.0.1 (nothing listens on this port
        // there); the guard pins it to 127.0.0.2, where the server is.
        struct Pinned: SourceGuard {
            func address(for url: URL) async throws(DataLoadingError) -> String { "127.0.0.2" }
        }
        let loader = HTTPDataLoader(configuration: .init(sourceGuard: Pinned()))
        let url = URL(string: "http://localhost:\(allowed.port)/a.png")!
        let loaded = try await loader.loadData(for: DataRequest(url: url)) { _ in }
        #expect(loaded.data == Self.png)
        #expect(allowed.lastRequest("/a.png")?.headers[HTTPField.Name("Host")!] == "localhost:\(allowed.port)")

        // With no redirects to follow, a guarded loader returns the redirect as it came.
        allowed.setRoute("/moved", .redirect(to: "/a.png", status: 308))
        let unfollowed = HTTPDataLoader(configuration: .init(maximumRedirects: 0, sourceGuard: Pinned()))
        let moved = try await unfollowed.loadData(for: DataRequest(url: URL(string: "http://localhost:\(allowed.port)/moved")!)) { _ in }
        #expect(moved.statusCode == 308 && moved.headers[.location] == "/a.png" && allowed.requestCount("/a.png") == 1)
        try await unfollowed.shutdown()
        try await loader.shutdown()
        try await allowed.shutdown()
    }

    @Test("schemes other than http and https are refused by the guard")
    func schemes() async throws {
        let loader = Self.guardedLoader()
        for text in ["file:///etc/passwd", "ftp://127.0.0.2/a.png", "gopher://127.0.0.2/"] {
            let error = await #expect(throws: DataLoadingError.self) {
                _ = try await loader.loadData(for: DataRequest(url: URL(string: text)!)) { _ in }
            }
            #expect(error != nil, "\(text)")
        }
    }
}
