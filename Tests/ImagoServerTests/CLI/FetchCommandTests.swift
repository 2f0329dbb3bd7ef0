import Foundation
import Imago
import ImagoSandbox
import Testing

/// `imago fetch --headers`, run as a person runs it: the fields of what it
/// served, a stored answer's with its Age.
@Suite("imago fetch --headers prints each answer's status and fields", .timeLimit(.minutes(5)))
struct FetchCommandTests {
    @Test("a download's fields, then the same stored answer from disk with its Age; -H sends a request field; a 404 is printed as it came")
    func headers() async throws {
        let server = try await TestImageServer.start()
        do {
            try await check(server)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    private func check(_ server: TestImageServer) async throws {
        let custom = HTTPField.Name("X-Custom")!
        server.setRoute(
            "/doc.json", .init(headers: [.cacheControl: "max-age=600", custom: "kept", .contentType: "application/json"], body: Data("{}".utf8)))
        server.setRoute("/missing", .init(status: 404, headers: [.contentType: "text/plain"], body: Data("no".utf8)))
        let folder = TemporaryDirectory()
        func fetch(_ path: String, _ extra: [String] = []) async throws -> (String, Subprocess.Termination) {
            let imago = try ChildProcess(
                "imago", arguments: ["fetch", "--cache", folder.path, "--headers"] + extra + [server.url(path).absoluteString])
            let (output, status) = await imago.allOutput()
            return (output.lowercased(), status)  // names as the server spelt them, or lowercased as stored
        }

        let (first, firstStatus) = try await fetch("/doc.json", ["-H", "X-Token: from-cli"])
        #expect(firstStatus == .exited(0) && first.contains("  200  ") && first.contains("from network"), "\(first)")
        #expect(first.contains("x-custom: kept") && first.contains("content-type: application/json"), "\(first)")
        #expect(server.lastRequest("/doc.json")?.headers[HTTPField.Name("X-Token")!] == "from-cli")

        let (second, _) = try await fetch("/doc.json")
        #expect(second.contains("from disk") && second.contains("x-custom: kept") && second.contains("age: "), "\(second)")
        #expect(server.requestCount("/doc.json") == 1)

        let (missing, _) = try await fetch("/missing")
        #expect(missing.contains("  404  ") && missing.contains("content-type: text/plain"), "\(missing)")
    }
}
