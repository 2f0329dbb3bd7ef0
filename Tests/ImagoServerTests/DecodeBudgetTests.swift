import Foundation
import Imago
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoServer

@Suite("Decoded-pixel budget: header estimates, the service within a tiny budget")
struct DecodeBudgetTests {
    @Test("estimates from the header: JPEG at its DCT scale, PNG, GIF and WebP whole, others unknown")
    func estimates() throws {
        let photo = FormatFixtures.quadrants(width: 800, height: 600)
        let jpeg = try JPEGEncoder().encode(photo)
        let thumbnail = ImageDecodingOptions(targetSize: ImageSize(width: 100, height: 100), contentMode: .fit)
        #expect(ImageDecodingOptions().decodedBytesEstimate(of: jpeg) == 800 * 600 * 4)
        #expect(thumbnail.decodedBytesEstimate(of: jpeg) == 100 * 75 * 4)  // decoded at 1/8
        #expect(thumbnail.decodedBytesEstimate(of: try PNGEncoder().encode(photo)) == 800 * 600 * 4)
        #expect(thumbnail.decodedBytesEstimate(of: try WebPEncoder().encode(photo)) == 800 * 600 * 4)
        let gif = try FormatFixtures.gif(
            width: 300, height: 200, palette: [(0, 0, 0), (255, 255, 255)], frames: [.init(width: 1, height: 1, indices: [0])])
        #expect(thumbnail.decodedBytesEstimate(of: gif) == 300 * 200 * 4)
        #expect(thumbnail.decodedBytesEstimate(of: try FormatFixtures.avif([photo])) == nil)
        #expect(thumbnail.decodedBytesEstimate(of: Data("<html>".utf8)) == nil)
        #expect(thumbnail.decodedBytesEstimate(of: jpeg.prefix(10)) == nil)
    }

    @Test("the service reserves from its budget and answers with a tiny one")
    func serviceUnderBudget() async throws {
        let server = try await TestImageServer.start(host: "127.0.0.2")
        server.setRoute("/big.png", .init(body: try PNGEncoder().encode(FormatFixtures.quadrants(width: 1000, height: 800))))
        let folder = TemporaryDirectory()
        let service = try ImageService(
            configuration: .init(
                allowsUnsigned: true, sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]), cacheFolder: folder.path,
                queueTimeout: .seconds(600), decodeMemoryBudget: 1 << 20
            ))
        let statuses = await withTaskGroup(of: Int.self) { group in
            for width in [40, 41, 42, 43] {
                group.addTask {
                    await service.respond(to: ServiceRequest(path: ImageServiceTests.path("w:\(width)/f:png", server.url("/big.png")))).status
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == [200, 200, 200, 200])
        let counts = try #require(service.pipeline.decodeMemory?.counts, "the service limits its pipeline's decode memory")
        #expect(counts == (0, 0), "every reservation was given back")
        try await server.shutdown()
    }
}
