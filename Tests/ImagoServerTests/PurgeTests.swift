import Foundation
import HummingbirdTesting
import Imago
import ImagoSandbox
import Logging
import Testing

@testable import ImagoServer

/// `POST /purge?source=…` on the admin listener: every cached answer of a
/// source and the source itself go, so the next request fetches it again;
/// without the token, a 401 and nothing removed.
@Suite("Purge: the admin listener")
struct PurgeTests {
    static let token = "s3cr3t-admin-token"

    @Test("purge then request: the source is fetched from the origin again, and the answer says how many entries went")
    func purgeThenRequest() async throws {
        // Given two answers of the photo, one of another source, all cached, the sources kept from their first fetch
        let (server, _) = try await ImageServiceOptionsTests.photoServer()
        let folder = TemporaryDirectory()
        let service = try ImageServiceOptionsTests.service(in: folder) { $0.sourceAdmission = .always }
        let photo = server.url("/photo.jpg")
        for options in ["w:50", "w:60"] {
            #expect(await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain(options, photo))).status == 200)
        }
        #expect(await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50", server.url("/alpha.png")))).status == 200)
        #expect(server.requestCount("/photo.jpg") == 1)
        let admin = ServeApplication.application(
            router: ServeApplication.adminRouter(service: service, token: Self.token, logger: Logger(label: "test")), host: "127.0.0.1", port: 0,
            logger: Logger(label: "test"))
        let encoded = try #require(photo.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        try await admin.test(.router) { client in
            // When it is purged without the token, or with a wrong one
            for authorization in [nil, "Bearer wrong", "Basic " + Self.token] as [String?] {
                let headers: HTTPFields = authorization.map { [.authorization: $0] } ?? [:]
                let refused = try await client.execute(uri: "/purge?source=\(encoded)", method: .post, headers: headers)
                #expect(refused.status == .unauthorized && refused.headers[.wwwAuthenticate] == "Bearer")
            }
            // Then nothing went: the answers are still hits
            #expect(await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50", photo))).status == 200)
            #expect(server.requestCount("/photo.jpg") == 1)
            // When it is purged with the token
            let purged = try await client.execute(uri: "/purge?source=\(encoded)", method: .post, headers: [.authorization: "Bearer " + Self.token])
            #expect(purged.status == .ok)
            let body = try JSONDecoder().decode(ServeApplication.PurgeAnswer.self, from: Data(buffer: purged.body))
            // Then both answers and the source went, and the metrics are served there too
            #expect(body.removed == 3 && body.source == photo.absoluteString, "\(body)")
            #expect(try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer " + Self.token]).status == .ok)
            #expect(try await client.execute(uri: "/purge", method: .post, headers: [.authorization: "Bearer " + Self.token]).status == .badRequest)
        }
        // And the next request fetches the photo again, while the other source's answer stays
        #expect(await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:60", photo))).status == 200)
        #expect(server.requestCount("/photo.jpg") == 2)
        #expect(await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50", server.url("/alpha.png")))).status == 200)
        #expect(server.requestCount("/alpha.png") == 1)
        try await server.shutdown()
    }

    @Test("the index survives a restart: a purge after one still finds the answers on disk")
    func afterARestart() async throws {
        let (server, _) = try await ImageServiceOptionsTests.photoServer()
        let folder = TemporaryDirectory()
        let photo = server.url("/photo.jpg")
        let first = try ImageServiceOptionsTests.service(in: folder)
        #expect(await first.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50", photo))).status == 200)
        first.close()
        let second = try ImageServiceOptionsTests.service(in: folder)
        #expect(try await second.purge(source: photo.absoluteString) == 1)
        #expect(await second.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50", photo))).status == 200)
        #expect(server.requestCount("/photo.jpg") == 2)
        await #expect(throws: ServiceError.self) { try await second.purge(source: "file:///etc/passwd") }
        second.close()
        try await server.shutdown()
    }

    @Test("the admin listener needs its token; its address and the metrics one are checked")
    func settings() throws {
        #expect(throws: ConfigurationError.self) { try ServeConfiguration(flags: ["admin-bind": ["127.0.0.1:9090"]], environment: [:]).validate() }
        let configured = try ServeConfiguration(flags: ["admin-bind": ["127.0.0.1:9090"]], environment: ["IMAGO_ADMIN_TOKEN": Self.token])
        try configured.validate()
        #expect(configured.adminToken == Self.token)
        #expect(throws: ConfigurationError.self) { try ServeConfiguration(flags: ["metrics-bind": ["nowhere"]], environment: [:]).validate() }
    }
}
