import Foundation
import HTTPTypes
import Imago
import ImagoSandbox
import Testing

@testable import ImagoServer

/// A client's fields passed on to sources, by the operator's allow-list:
/// only those listed, each answer kept under their values, and the
/// answers varying on them.
@Suite("Sources: the client's fields the operator forwards")
struct ForwardedHeadersTests {
    @Test("listed fields reach the source, others do not; answers are kept per value and vary on the names")
    func forwarded() async throws {
        let (server, _) = try await ImageServiceOptionsTests.photoServer()
        let service = try ImageServiceOptionsTests.service(in: TemporaryDirectory()) {
            $0.forwardedHeaders = [.cookie, HTTPField.Name("X-Tenant")!]
        }
        let path = ImageServiceOptionsTests.plain("w:50/f:png", server.url("/photo.jpg"))
        func get(_ headers: HTTPFields) async -> ServiceResponse { await service.respond(to: ServiceRequest(path: path, headers: headers)) }
        // When a client sends a cookie, a tenant and a token
        let first = await get([.cookie: "session=1", HTTPField.Name("X-Tenant")!: "blue", .authorization: "Bearer client"])
        #expect(first.status == 200 && first.headers[.vary] == "Cookie, X-Tenant")
        // Then the listed fields reached the source, the token did not
        let seen = try #require(server.lastRequest("/photo.jpg")).headers
        #expect(seen[.cookie] == "session=1" && seen[HTTPField.Name("X-Tenant")!] == "blue" && seen[.authorization] == nil)
        // And the same values are the same answer; other values, or none, are fetched with their own
        _ = await get([.cookie: "session=1", HTTPField.Name("X-Tenant")!: "blue"])
        #expect(server.requestCount("/photo.jpg") == 1)
        _ = await get([.cookie: "session=2", HTTPField.Name("X-Tenant")!: "blue"])
        #expect(server.requestCount("/photo.jpg") == 2 && server.lastRequest("/photo.jpg")?.headers[.cookie] == "session=2")
        _ = await get([:])
        #expect(server.requestCount("/photo.jpg") == 3 && server.lastRequest("/photo.jpg")?.headers[.cookie] == nil)
        try await server.shutdown()
    }

    @Test("Host, hop-by-hop fields and validators are never forwarded")
    func refused() throws {
        for name in ["Host", "Connection", "Transfer-Encoding", "Keep-Alive", "If-None-Match", "Range", "TE", "not a name"] {
            #expect(throws: ConfigurationError.self, "\(name)") {
                try ServeConfiguration(flags: ["forward-header": [name]], environment: [:])
            }
        }
        let configured = try ServeConfiguration(flags: [:], environment: ["IMAGO_FORWARD_HEADERS": "Cookie, Accept-Language"])
        #expect(configured.service.forwardedHeaders == [.cookie, .acceptLanguage])
    }
}
