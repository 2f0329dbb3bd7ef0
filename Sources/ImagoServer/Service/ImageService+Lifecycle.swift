import ServiceLifecycle

/// A ServiceLifecycle service, so that it stops after the HTTP server that
/// uses it: list it before the server in a `ServiceGroup` (graceful
/// shutdown goes through the list backwards), or in Hummingbird's
/// `Application(services:)`, which stops the server first.
extension ImageService: Service {
    /// Waits for the graceful shutdown (or cancellation), then ``shutdown()``.
    public func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }
}
