import Foundation
import Imago
import ImagoSandbox
import Testing

@testable import ImagoServer

/// Answers shared by every instance through object storage (moto's S3
/// server): the second instance answers what the first made without
/// transforming; with the store down, both keep answering.
@Suite("Results shared through object storage")
struct SharedResultStoreTests {
    static func service(_ moto: MotoServer, metrics: ServiceMetrics) throws -> ImageService {
        var configuration = ImageService.Configuration(
            signing: ImageServiceTests.signing, allowsUnsigned: true, sourcePolicy: SourcePolicy(allowedNetworks: [IPNetwork("127.0.0.2/32")!]),
            cacheFolder: TemporaryDirectory().path)
        configuration.objectStorage = ObjectStorage(endpoint: moto.endpoint, usesPathStyle: true, credentials: moto.credentials)
        configuration.resultStore = URL(string: "s3://results/imago/")
        // A loaded machine may take its time; a store that is down refuses at once.
        configuration.resultStoreTimeout = .seconds(120)
        return try ImageService(configuration: configuration, metrics: metrics)
    }

    /// The photo server, moto with a results bucket, and two instances storing there, each with its metrics.
    static func twoInstancesOnOneStore() async throws -> (
        TestImageServer, MotoServer, (ImageService, ServiceMetrics), (ImageService, ServiceMetrics)
    ) {
        let (server, _) = try await ImageServiceOptionsTests.photoServer()
        let moto = try await MotoServer(bucket: "results", objects: [:])
        let (firstMetrics, secondMetrics) = (ServiceMetrics(), ServiceMetrics())
        return (server, moto, (try service(moto, metrics: firstMetrics), firstMetrics), (try service(moto, metrics: secondMetrics), secondMetrics))
    }

    /// The value of a metric without labels in `metrics`' exposition.
    static func value(_ name: String, in metrics: ServiceMetrics) -> Double {
        let line = metrics.exposition(queueLength: 0).split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test(
        "a second instance answers a variant the first made with no transformation; with the store down both answer",
        .enabled(if: MotoServer.venv != nil))
    func twoInstances() async throws {
        let (server, moto, (first, firstMetrics), (second, secondMetrics)) = try await Self.twoInstancesOnOneStore()
        defer { moto.stop() }
        let path = ImageServiceOptionsTests.plain("w:50/f:png", server.url("/photo.jpg"))

        // When the first instance makes an answer and its write to the store lands
        let made = await first.respond(to: ServiceRequest(path: path))
        await first.store?.waitForWrites()
        // Then the second answers it from the store: the same bytes, no transformation, no source fetch
        let shared = await second.respond(to: ServiceRequest(path: path))
        #expect(made.status == 200 && shared.status == 200 && shared.body == made.body)
        #expect(Self.value("imago_transformations_total", in: firstMetrics) == 1)
        #expect(Self.value("imago_transformations_total", in: secondMetrics) == 0)
        #expect(Self.value("imago_result_store_hits_total", in: secondMetrics) == 1)
        #expect(server.requestCount("/photo.jpg") == 1)
        #expect(Self.value("imago_result_store_errors_total", in: firstMetrics) == 0)

        // When the store goes down
        moto.stop()
        // Then both keep answering, transforming themselves, and count the failures
        for (service, metrics) in [(first, firstMetrics), (second, secondMetrics)] {
            let response = await service.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:70/f:png", server.url("/photo.jpg"))))
            #expect(response.status == 200, "\(ImageServiceOptionsTests.body(response))")
            await service.store?.waitForWrites()
            #expect(Self.value("imago_result_store_errors_total", in: metrics) >= 1)
        }
        #expect(Self.value("imago_transformations_total", in: secondMetrics) == 1)
        try await server.shutdown()
    }

    @Test("a purge on any instance removes the source's answers from the store", .enabled(if: MotoServer.venv != nil))
    func purge() async throws {
        let (server, moto, (first, firstMetrics), (second, secondMetrics)) = try await Self.twoInstancesOnOneStore()
        defer { moto.stop() }
        // Given two answers of the photo and one of another source made by the first instance, in the store
        for (options, path) in [("w:50/f:png", "/photo.jpg"), ("w:60/f:png", "/photo.jpg"), ("w:50/f:png", "/alpha.png")] {
            #expect(await first.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain(options, server.url(path)))).status == 200)
        }
        await first.store?.waitForWrites()
        #expect(Self.value("imago_result_store_errors_total", in: firstMetrics) == 0)
        // When the second instance, which made none of them, purges the photo
        #expect(try await second.purge(source: server.url("/photo.jpg").absoluteString) == 2)
        // Then it makes the photo's answer itself, while the other source's still comes from the store
        _ = await second.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50/f:png", server.url("/photo.jpg"))))
        _ = await second.respond(to: ServiceRequest(path: ImageServiceOptionsTests.plain("w:50/f:png", server.url("/alpha.png"))))
        #expect(Self.value("imago_transformations_total", in: secondMetrics) == 1)
        #expect(Self.value("imago_result_store_hits_total", in: secondMetrics) == 1)
        #expect(Self.value("imago_result_store_errors_total", in: secondMetrics) == 0)
        try await server.shutdown()
    }

    @Test("the stored form reads back: metadata, bytes, and nothing from a damaged body")
    func storedForm() throws {
        let result = EncodedResult(
            data: Data("pixels".utf8), mediaType: "image/png", sourceValidator: "\"v1\"", lastModified: nil, maxAge: 60, lifetime: .seconds(600))
        let decoded = try #require(SharedResultStore.decode(SharedResultStore.encode(result)))
        #expect(decoded.mediaType == "image/png" && decoded.sourceValidator == "\"v1\"" && decoded.etag == result.etag)
        #expect(SharedResultStore.decode(Data([0, 0, 1, 0, 1])) == nil && SharedResultStore.decode(Data()) == nil)
    }
}
