import ImagoSandbox

@testable import Imago

/// Runs `body` with a fresh in-process server and an HTTP loader, and shuts
/// both down afterwards, whether `body` succeeded or threw.
func withTestServer(
    _ configuration: HTTPDataLoader.Configuration = .init(),
    _ body: (TestImageServer, HTTPDataLoader) async throws -> Void
) async throws {
    let server = try await TestImageServer.start()
    let loader = HTTPDataLoader(configuration: configuration)
    do {
        try await body(server, loader)
    } catch {
        try? await loader.shutdown()
        try? await server.shutdown()
        throw error
    }
    try await loader.shutdown()
    try await server.shutdown()
}
