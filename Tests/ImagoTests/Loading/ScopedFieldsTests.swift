import Foundation
import ImagoSandbox
import Testing

@testable import Imago

/// Fields for one prefix reach the URLs under it only, at every redirect hop.
/// Two loopback hosts stand for two origins: 127.0.0.2 owns the fields,
/// 127.0.0.3 is where an open redirect points, and records what it hears.
@Suite("Scoped fields: a secret stays with its prefix, redirects included", .timeLimit(.minutes(10)))
struct ScopedFieldsTests {
    static let apiKey = HTTPField.Name("X-Api-Key")!
    let body = Data("image bytes".utf8)

    @Test("a prefix holds the URLs of its origin and path only, whatever text a URL starts with")
    func prefixes() throws {
        let prefix = try #require(URLPrefix("https://Media.Example/private/"))
        for inside in ["https://media.example/private/a.jpg", "https://media.example:443/private/a/b.jpg?w=1", "HTTPS://MEDIA.EXAMPLE/private/"] {
            #expect(prefix.contains(URL(string: inside)!), "\(inside)")
        }
        for outside in [
            "http://media.example/private/a.jpg", "https://media.example:8443/private/a.jpg", "https://media.example/public/a.jpg",
            "https://media.example.evil.example/private/a.jpg", "https://media.example@evil.example/private/a.jpg",
            "https://media.example/private/../public/a.jpg", "https://evil.example/https://media.example/private/",
        ] {
            #expect(!prefix.contains(URL(string: outside)!), "\(outside)")
        }
        let origin = try #require(URLPrefix(origin: URL(string: "http://127.0.0.2:8080/a/b.jpg")!))
        #expect(origin.contains(URL(string: "http://127.0.0.2:8080/other.png")!))
        #expect(!origin.contains(URL(string: "http://127.0.0.2:8081/a/b.jpg")!))
        for refused in ["media.example/", "ftp://media.example/", "https:///path", "https://user:pass@media.example/", "not a url"] {
            #expect(URLPrefix(refused) == nil, "\(refused)")
        }
    }

    /// Connects to the host the URL names, as a guard that approves every loopback hop.
    struct Approving: SourceGuard {
        func address(for url: URL) async throws(DataLoadingError) -> String { url.host ?? "" }
    }

    /// Runs `body` with the owner's server, the other host's and a loader, guarded or not.
    func withOrigins(guarded: Bool, _ body: (TestImageServer, TestImageServer, HTTPDataLoader) async throws -> Void) async throws {
        let owner = try await TestImageServer.start(host: "127.0.0.2")
        let other = try await TestImageServer.start(host: "127.0.0.3")
        let loader = HTTPDataLoader(configuration: HTTPDataLoader.Configuration(sourceGuard: guarded ? Approving() : nil).patient)
        func shutdown() async {
            try? await loader.shutdown()
            try? await owner.shutdown()
            try? await other.shutdown()
        }
        do { try await body(owner, other, loader) } catch {
            await shutdown()
            throw error
        }
        await shutdown()
    }

    func request(_ url: URL, scopedTo owner: TestImageServer) -> DataRequest {
        DataRequest(
            url: url, headers: [.authorization: "Bearer caller", .accept: "image/*"],
            scopedHeaders: [ScopedFields(prefix: URLPrefix(owner.url("/").absoluteString)!, fields: [Self.apiKey: "s3cr3t"])])
    }

    @Test("a redirect to another host carries neither the scoped fields nor credentials, for every redirect status", arguments: [false, true])
    func crossOrigin(guarded: Bool) async throws {
        try await withOrigins(guarded: guarded) { owner, other, loader in
            for status in [301, 302, 303, 307, 308] {
                owner.setRoute("/go\(status)", .redirect(to: other.url("/land\(status)").absoluteString, status: status))
                other.setRoute("/land\(status)", .init(body: body))
                // When a source under the prefix redirects to the other host
                let response = try await loader.loadData(for: request(owner.url("/go\(status)"), scopedTo: owner)) { _ in }
                // Then the owner heard the key, the other host none of it, but the fields that are no secret
                #expect(response.data == body && response.url == other.url("/land\(status)"))
                #expect(owner.lastRequest("/go\(status)")?.headers[Self.apiKey] == "s3cr3t")
                let heard = try #require(other.lastRequest("/land\(status)")).headers
                #expect(heard[Self.apiKey] == nil && heard[.authorization] == nil && heard[.accept] == "image/*", "\(status)")
            }
        }
    }

    @Test(
        "a chain that leaves and comes back under the prefix sends the fields again there; a same-prefix redirect keeps them",
        arguments: [false, true])
    func comingBack(guarded: Bool) async throws {
        try await withOrigins(guarded: guarded) { owner, other, loader in
            owner.setRoute("/out", .redirect(to: other.url("/bounce").absoluteString, status: 307))
            other.setRoute("/bounce", .redirect(to: owner.url("/back").absoluteString, status: 302))
            owner.setRoute("/back", .redirect(to: "/final", status: 308))
            owner.setRoute("/final", .init(body: body))
            let response = try await loader.loadData(for: request(owner.url("/out"), scopedTo: owner)) { _ in }
            #expect(response.data == body)
            #expect(other.lastRequest("/bounce")?.headers[Self.apiKey] == nil)
            for path in ["/back", "/final"] {
                #expect(owner.lastRequest(path)?.headers[Self.apiKey] == "s3cr3t", "\(path)")
                // Credentials of the request's own stop at the first other origin, and stay stopped.
                #expect(owner.lastRequest(path)?.headers[.authorization] == nil, "\(path)")
            }
        }
    }

    @Test("a scoped field replaces the request's own field of that name, all its values")
    func replaces() throws {
        let prefix = try #require(URLPrefix("http://127.0.0.2/"))
        var scoped = HTTPFields()
        scoped.append(HTTPField(name: .cookie, value: "a=1"))
        scoped.append(HTTPField(name: .cookie, value: "b=2"))
        let fields: HTTPFields = [.cookie: "caller=1", .accept: "image/*"]
        let sent = fields.adding([ScopedFields(prefix: prefix, fields: scoped)], for: URL(string: "http://127.0.0.2/a.png")!)
        #expect(sent[values: .cookie] == ["a=1", "b=2"] && sent[.accept] == "image/*")
        #expect(fields.adding([ScopedFields(prefix: prefix, fields: scoped)], for: URL(string: "http://127.0.0.3/a.png")!) == fields)
    }
}
