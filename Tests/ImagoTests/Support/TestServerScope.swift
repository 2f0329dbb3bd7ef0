import ImagoSandbox

@testable import Imago

/// Runs `body` with a fresh in-process server and an HTTP loader, and shuts
/// both down afterwards, whether `body` succeeded or threw. The loader's
/// timeouts are `configuration`'s, except that those left at the library's
/// defaults are ten minutes (``HTTPDataLoader/Configuration/patient``).
func withTestServer(
    _ configuration: HTTPDataLoader.Configuration = .init(),
    _ body: (TestImageServer, HTTPDataLoader) async throws -> Void
) async throws {
    let server = try await TestImageServer.start()
    let loader = HTTPDataLoader(configuration: configuration.patient)
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

extension HTTPDataLoader.Configuration {
    /// This configuration with every timeout a test left at the library's
    /// default raised to ten minutes: a test that is not about a timeout
    /// waits for the server, however slowly a loaded machine (ThreadSanitizer,
    /// both cores busy) lets it connect and answer; one that set a timeout
    /// keeps it.
    var patient: Self {
        let defaults = Self()
        let long = Duration.seconds(600)
        var patient = self
        if connectTimeout == defaults.connectTimeout { patient.connectTimeout = long }
        if readTimeout == defaults.readTimeout { patient.readTimeout = long }
        if requestTimeout == defaults.requestTimeout { patient.requestTimeout = long }
        return patient
    }
}
