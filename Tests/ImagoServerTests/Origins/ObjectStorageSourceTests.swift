import Foundation
import HTTPTypes
import Imago
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoServer

/// `s3://bucket/key` sources, end to end against moto's S3 server (which
/// checks signatures), and the addressing of objects.
@Suite("Sources: object storage")
struct ObjectStorageSourceTests {
    static let jpeg = try! JPEGEncoder(quality: 95).encode(FormatFixtures.quadrants(width: 200, height: 150))

    static func service(_ moto: MotoServer, credentials: AWSCredentials? = nil) throws -> ImageService {
        try ImageServiceOptionsTests.service(in: TemporaryDirectory()) {
            $0.objectStorage = ObjectStorage(endpoint: moto.endpoint, usesPathStyle: true, credentials: credentials ?? moto.credentials)
        }
    }

    @Test(
        "a signed GET answers an object, a missing key is a 404, wrong credentials a 502 naming the store's 403", .enabled(if: MotoServer.venv != nil)
    )
    func endToEnd() async throws {
        // Given a bucket with a photo under a key that needs encoding
        let moto = try await MotoServer(bucket: "photos", objects: ["summer 2024/ä.jpg": Self.jpeg])
        defer { moto.stop() }
        let service = try Self.service(moto)
        // When it is asked for, resized
        let response = await service.respond(to: ServiceRequest(path: "/unsafe/w:50/f:png/plain/s3://photos/summer%202024/%C3%A4.jpg"))
        // Then it is answered
        #expect(response.status == 200, "\(ImageServiceOptionsTests.body(response))")
        #expect(try PNGDecoder().decode(response.body, options: .init()).size == ImageSize(width: 50, height: 38))
        // And a missing key is a 404; a wrong secret is refused by the store, a 502
        let missing = await service.respond(to: ServiceRequest(path: "/unsafe/w:50/plain/s3://photos/none.jpg"))
        #expect(missing.status == 404, "\(ImageServiceOptionsTests.body(missing))")
        let wrong = try Self.service(moto, credentials: AWSCredentials(accessKeyID: moto.credentials.accessKeyID, secretAccessKey: "wrong"))
        let refused = await wrong.respond(to: ServiceRequest(path: "/unsafe/w:50/plain/s3://photos/summer%202024/%C3%A4.jpg"))
        #expect(refused.status == 502 && ImageServiceOptionsTests.body(refused).contains("403"), "\(ImageServiceOptionsTests.body(refused))")
    }

    @Test("a conditional GET with the object's ETag is a 304, signed like any other", .enabled(if: MotoServer.venv != nil))
    func conditionalGet() async throws {
        let moto = try await MotoServer(bucket: "photos", objects: ["a.jpg": Self.jpeg])
        defer { moto.stop() }
        let loader = ObjectStorageLoader(
            settings: ObjectStorage(endpoint: moto.endpoint, usesPathStyle: true, credentials: moto.credentials), http: Patient.loader())
        let url = try #require(URL(string: "s3://photos/a.jpg"))
        let first = try await loader.load(DataRequest(url: url), progress: { _ in })
        let etag = try #require(first.headers[.eTag])
        #expect(first.statusCode == 200 && first.data == Self.jpeg)
        let again = try await loader.load(DataRequest(url: url, headers: [.ifNoneMatch: etag]), progress: { _ in })
        #expect(again.statusCode == 304)
    }

    @Test("objects are addressed path-style or by virtual host, their keys encoded as SigV4 signs them")
    func addressing() throws {
        let url = try #require(URL(string: "s3://my-bucket/a%20b/c+d.jpg"))
        func target(_ storage: ObjectStorage) -> String? {
            ObjectStorageLoader(settings: storage, http: HTTPDataLoader()).target(for: url)?.absoluteString
        }
        #expect(target(ObjectStorage(region: "eu-west-1")) == "https://my-bucket.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd.jpg")
        #expect(
            target(ObjectStorage(endpoint: URL(string: "http://127.0.0.1:9000"), usesPathStyle: true))
                == "http://127.0.0.1:9000/my-bucket/a%20b/c%2Bd.jpg")
        #expect(
            target(ObjectStorage(endpoint: URL(string: "https://minio.example/storage/")))
                == "https://my-bucket.minio.example/storage/a%20b/c%2Bd.jpg")
    }

    @Test("s3 sources are a 400 on a server without object storage; the settings read AWS's variables")
    func settings() async throws {
        let plain = try ImageServiceOptionsTests.service(in: TemporaryDirectory())
        #expect(await plain.respond(to: ServiceRequest(path: "/unsafe/w:50/plain/s3://photos/a.jpg")).status == 400)
        let configuration = try ServeConfiguration(
            flags: ["s3-endpoint": ["http://127.0.0.1:9000"], "s3-path-style": ["1"]],
            environment: ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "SECRET", "AWS_SESSION_TOKEN": "TOKEN", "AWS_REGION": "eu-central-1"])
        let storage = try #require(configuration.service.objectStorage)
        #expect(storage.endpoint?.absoluteString == "http://127.0.0.1:9000" && storage.usesPathStyle && storage.region == "eu-central-1")
        #expect(storage.credentials == AWSCredentials(accessKeyID: "AKID", secretAccessKey: "SECRET", sessionToken: "TOKEN"))
        #expect(!"\(storage)".contains("SECRET"), "the secret never reaches a log")
        #expect(try ServeConfiguration(flags: [:], environment: ["AWS_ACCESS_KEY_ID": "AKID"]).service.objectStorage == nil)
    }
}
