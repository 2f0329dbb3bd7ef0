import Foundation
import Imago
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoServer

#if canImport(Glibc)
    import Glibc
#endif

/// `local:///path` sources: files under the operator's root, and nothing
/// else: dot segments (plain or percent-encoded), NUL, symbolic links out
/// of the root, devices and FIFOs are refused, never read.
@Suite("Sources: local files")
struct LocalSourceTests {
    /// A root with a photo, a folder, a link inside and one leading out, a FIFO; and a file outside it.
    struct Root {
        let folder = TemporaryDirectory("imago-local")
        var root: String { folder.appending("root") }
        let jpeg: Data

        init() throws {
            jpeg = try JPEGEncoder(quality: 95).encode(FormatFixtures.quadrants(width: 200, height: 150))
            try FileManager.default.createDirectory(atPath: folder.appending("root/photos"), withIntermediateDirectories: true)
            try jpeg.write(to: URL(fileURLWithPath: folder.appending("root/photos/a b.jpg")))
            try Data("secret".utf8).write(to: URL(fileURLWithPath: folder.appending("secret.txt")))
            try FileManager.default.createSymbolicLink(atPath: folder.appending("root/inside.jpg"), withDestinationPath: "photos/a b.jpg")
            try FileManager.default.createSymbolicLink(
                atPath: folder.appending("root/outside.txt"), withDestinationPath: folder.appending("secret.txt"))
            try FileManager.default.createSymbolicLink(atPath: folder.appending("root/null"), withDestinationPath: "/dev/null")
            guard mkfifo(folder.appending("root/fifo.jpg"), 0o644) == 0 else { throw POSIXError(.EEXIST) }
        }

        func service() throws -> ImageService {
            try ImageServiceOptionsTests.service(in: folder) { $0.localRoot = root }
        }
    }

    static func get(_ service: ImageService, _ source: String, options: String = "w:50/f:png") async -> ServiceResponse {
        await service.respond(to: ServiceRequest(path: "/unsafe/\(options)/plain/\(source)"))
    }

    @Test("a file under the root is answered, a link inside the root too; a missing file is a 404")
    func filesUnderTheRoot() async throws {
        let root = try Root()
        let service = try root.service()
        for source in ["local:///photos/a%20b.jpg", "local:///inside.jpg"] {
            let response = await Self.get(service, source)
            #expect(response.status == 200, "\(source): \(ImageServiceOptionsTests.body(response))")
            #expect(try PNGDecoder().decode(response.body, options: .init()).size == ImageSize(width: 50, height: 38))
        }
        let missing = await Self.get(service, "local:///photos/none.jpg")
        #expect(missing.status == 404, "\(ImageServiceOptionsTests.body(missing))")
    }

    @Test(
        "dot segments, plain or percent-encoded, and NUL are refused before the file system is asked",
        arguments: [
            "local:///../secret.txt", "local:///photos/../../secret.txt", "local:///%2e%2e/secret.txt", "local:///photos/%2E%2E/%2e%2e/secret.txt",
            "local:///./photos/a%20b.jpg", "local:///photos%2f..%2f..%2fsecret.txt", "local:///photos/a%00.jpg",
        ])
    func dotSegments(source: String) async throws {
        let root = try Root()
        let response = await Self.get(try root.service(), source)
        #expect(response.status == 403, "\(ImageServiceOptionsTests.body(response))")
    }

    @Test("a link that leads out of the root, a device and a FIFO are refused without being read")
    func linksDevicesAndFIFOs() async throws {
        let root = try Root()
        let service = try root.service()
        for source in ["local:///outside.txt", "local:///null", "local:///fifo.jpg"] {
            // A FIFO opened for reading would wait for a writer forever: the answer coming at all shows it was not.
            let response = await Self.get(service, source, options: "raw:1")
            #expect(response.status == 403, "\(source): \(ImageServiceOptionsTests.body(response))")
            #expect(!ImageServiceOptionsTests.body(response).contains("secret"))
        }
    }

    @Test("a device file under the root is refused without being opened", .enabled(if: geteuid() == 0, "mknod needs root"))
    func devices() async throws {
        let root = try Root()
        // /dev/zero (1, 5, as Linux packs them): read, it would never end.
        guard mknod(root.folder.appending("root/zero.jpg"), S_IFCHR | 0o644, dev_t(1 << 8 | 5)) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM)
        }
        let response = await Self.get(try root.service(), "local:///zero.jpg", options: "raw:1")
        #expect(response.status == 403 && ImageServiceOptionsTests.body(response).contains("not a regular file"))
    }

    @Test("local sources are a 400 on a server without a local root, and a host is refused")
    func withoutARoot() async throws {
        let root = try Root()
        let plain = try ImageServiceOptionsTests.service(in: TemporaryDirectory())
        #expect(await Self.get(plain, "local:///photos/a%20b.jpg").status == 400)
        #expect(await Self.get(try root.service(), "local://host/photos/a%20b.jpg").status == 400)
        #expect(throws: ConfigurationError.self) {
            try ImageServiceOptionsTests.service(in: TemporaryDirectory()) { $0.localRoot = root.folder.appending("no-such-folder") }
        }
    }

    @Test("the loader answers a matching validator with a 304, and a changed file with a new ETag")
    func conditionalRequests() async throws {
        let root = try Root()
        let loader = try #require(LocalFileLoader(root: root.root, maximumSize: 1 << 20, threads: PriorityThreadPool(threads: 1, name: "test-io")))
        let url = try #require(URL(string: "local:///photos/a%20b.jpg"))
        let first = try await loader.load(DataRequest(url: url))
        let etag = try #require(first.headers[.eTag])
        #expect(first.statusCode == 200 && first.data == root.jpeg && first.headers[.lastModified] != nil)
        let again = try await loader.load(DataRequest(url: url, headers: [.ifNoneMatch: etag]))
        #expect(again.statusCode == 304 && again.data.isEmpty)
        let since = try await loader.load(DataRequest(url: url, headers: [.ifModifiedSince: first.headers[.lastModified]!]))
        #expect(since.statusCode == 304)
        // Given the file replaced by a larger one
        try (root.jpeg + Data([0])).write(to: URL(fileURLWithPath: root.folder.appending("root/photos/a b.jpg")))
        let changed = try await loader.load(DataRequest(url: url, headers: [.ifNoneMatch: etag]))
        #expect(changed.statusCode == 200 && changed.headers[.eTag] != etag)
        // And a file over the size limit is refused as too large
        let small = try #require(LocalFileLoader(root: root.root, maximumSize: 100, threads: PriorityThreadPool(threads: 1, name: "test-io")))
        await #expect(throws: DataLoadingError.self) { try await small.load(DataRequest(url: url)) }
    }

    @Test("a source without a scheme is appended to the base")
    func base() throws {
        let policy = SourcePolicy(allowsLocalFiles: true, base: "local:///photos/")
        #expect(try policy.check(url: "a%20b.jpg").absoluteString == "local:///photos/a%20b.jpg")
        #expect(try policy.check(url: "https://example.com/x.jpg").absoluteString == "https://example.com/x.jpg")
        #expect(throws: SourceRefusal.self) { try SourcePolicy().check(url: "a.jpg") }
    }
}
