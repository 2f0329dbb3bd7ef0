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

    @Test(
        "neither the operator's fields nor a client's forwarded ones follow a redirect to another host; back under the prefix they are sent again",
        arguments: [301, 302, 303, 307, 308])
    func redirects(status: Int) async throws {
        // Given an owner (127.0.0.2) whose prefix has a key and whose sources redirect to another host (127.0.0.3)
        let (owner, jpeg) = try await ImageServiceOptionsTests.photoServer()
        let other = try await TestImageServer.start(host: "127.0.0.3")
        other.setRoute("/land.jpg", .init(body: jpeg))
        other.setRoute("/bounce", .redirect(to: owner.url("/photo.jpg").absoluteString, status: status))
        owner.setRoute("/away.jpg", .redirect(to: other.url("/land.jpg").absoluteString, status: status))
        owner.setRoute("/round.jpg", .redirect(to: other.url("/bounce").absoluteString, status: status))
        let folder = TemporaryDirectory()
        var configuration = try ServeConfiguration(
            flags: ["source-header": [owner.url("/").absoluteString + "=X-Api-Key: s3cr3t"], "forward-header": ["Cookie"], "cache": [folder.path]],
            environment: [:]
        ).service
        configuration.allowsUnsigned = true
        configuration.sourcePolicy = SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!, IPNetwork("127.0.0.3/32")!])
        let service = try ImageService(configuration: configuration)
        let apiKey = HTTPField.Name("X-Api-Key")!
        for source in ["/away.jpg", "/round.jpg"] {
            // When a client with a cookie asks for a source that redirects away
            let response = await service.respond(
                to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50", owner.url(source)), headers: [.cookie: "session=\(source)"]))
            #expect(response.status == 200, "\(source): \(ImageServiceOptionsTests.body(response))")
            // Then the owner heard both fields, the other host neither
            let asked = try #require(owner.lastRequest(source)).headers
            #expect(asked[apiKey] == "s3cr3t" && asked[.cookie] == "session=\(source)")
        }
        for path in ["/land.jpg", "/bounce"] {
            let heard = try #require(other.lastRequest(path)).headers
            #expect(heard[apiKey] == nil && heard[.cookie] == nil, "\(status) \(path) heard \(heard)")
        }
        // And the chain that came back to the owner sent them again there
        let back = try #require(owner.lastRequest("/photo.jpg")).headers
        #expect(back[apiKey] == "s3cr3t" && back[.cookie] == "session=/round.jpg")
        try await other.shutdown()
        try await owner.shutdown()
    }

    @Test("the setting names what is wrong: no prefix, no field name, a field the loader sets itself")
    func parsing() throws {
        let parsed = try SourceHeaders(parsing: "https://media.example/=Cookie:  session=1; theme=dark ")
        #expect(parsed.scoped.prefix == URLPrefix("https://media.example/") && parsed.scoped.fields[.cookie] == "session=1; theme=dark")
        for bad in [
            "Authorization: Bearer x", "https://media.example/=no colon", "media.example=Authorization: x", "https://a/=Host: b",
            "https://a/=Range: bytes=0-1", "https://user@media.example/=X-Api-Key: k", "ftp://media.example/=X-Api-Key: k",
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try SourceHeaders(parsing: bad) }
        }
    }
}
