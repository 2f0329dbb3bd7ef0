import Foundation
import HTTPTypes
import Imago
import ImagoSandbox
import Testing

@testable import ImagoServer

/// Fields the operator attaches to an origin's requests, by URL prefix.
@Suite("Sources: the operator's fields by prefix")
struct SourceHeadersTests {
    @Test("a field goes with sources under its prefix only, and a client's request cannot add one")
    func byPrefix() async throws {
        let (server, _) = try await ImageServiceOptionsTests.photoServer()
        let rules = [
            try SourceHeaders(parsing: server.url("/photo.jpg").absoluteString + "=Authorization: Bearer sesame"),
            try SourceHeaders(parsing: server.url("/").absoluteString + "=User-Agent: Imago for example.com"),
        ]
        let service = try ImageServiceOptionsTests.service(in: TemporaryDirectory()) { $0.sourceHeaders = rules }
        // When the photo and another source on the same origin are asked for
        let photo = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50", server.url("/photo.jpg"))))
        let alpha = await service.respond(
            to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50", server.url("/alpha.png")), headers: [.authorization: "Bearer client"]))
        // Then the token went with the photo only, the User-Agent with both, and the client's own field with neither
        #expect(photo.status == 200 && alpha.status == 200)
        let photoFields = try #require(server.lastRequest("/photo.jpg")).headers
        let alphaFields = try #require(server.lastRequest("/alpha.png")).headers
        #expect(photoFields[.authorization] == "Bearer sesame" && photoFields[.userAgent] == "Imago for example.com")
        #expect(alphaFields[.authorization] == nil && alphaFields[.userAgent] == "Imago for example.com")
        try await server.shutdown()
    }

    @Test("the setting names what is wrong: no prefix, no field name, a field the loader sets itself")
    func parsing() throws {
        let parsed = try SourceHeaders(parsing: "https://media.example/=Cookie:  session=1; theme=dark ")
        #expect(parsed.prefix == "https://media.example/" && parsed.fields[.cookie] == "session=1; theme=dark")
        for bad in [
            "Authorization: Bearer x", "https://media.example/=no colon", "media.example=Authorization: x", "https://a/=Host: b",
            "https://a/=Range: bytes=0-1",
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try SourceHeaders(parsing: bad) }
        }
    }
}
