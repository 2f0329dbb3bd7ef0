import ArgumentParser
import Foundation
import Imago
import ImagoServer

/// `imago health`: asks a running `imago serve` whether it is alive, for a
/// container's HEALTHCHECK (the image has no curl).
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask a running imago serve for /health: exit 0 if it answers 200, 1 otherwise.",
        discussion: "Without --url it asks 127.0.0.1 on the port IMAGO_BIND names (the wildcard addresses are asked on loopback)."
    )

    @Option(help: "The URL to ask.")
    var url: String?

    @Option(help: "Seconds to wait for the whole answer.")
    var timeout = 5

    func run() async throws {
        guard let target = URL(string: try url ?? Self.localURL()) else { throw ValidationError("--url is not a URL") }
        let limit = Duration.seconds(max(1, timeout))
        let loader = HTTPDataLoader(
            configuration: .init(
                connectTimeout: limit, readTimeout: limit, requestTimeout: limit, maximumRedirects: 0, maximumResponseSize: 64 << 10,
                userAgent: "imago health"))
        let answer: Result<DataLoadingResponse, DataLoadingError>
        do throws(DataLoadingError) {
            answer = .success(try await loader.loadData(for: DataRequest(url: target)) { _ in })
        } catch {
            answer = .failure(error)
        }
        try? await loader.shutdown()
        switch answer {
        case .success(let response) where response.statusCode == 200:
            print("\(target): ok")
        case .success(let response):
            Terminal.error("\(target): status \(response.statusCode)")
            throw ExitCode(ExitStatus.partialFailure)
        case .failure(let error):
            Terminal.error("\(target): \(error)")
            throw ExitCode(ExitStatus.partialFailure)
        }
    }

    /// `/health` on loopback, at the port `imago serve` listens on.
    static func localURL() throws -> String {
        let bind = ProcessInfo.processInfo.environment["IMAGO_BIND"] ?? ServeConfiguration().bind
        let (host, port): (String, Int)
        do { (host, port) = try ServeConfiguration.address(bind) } catch { throw ValidationError(error.description) }
        var asked = ["0.0.0.0", "::", "[::]", ""].contains(host) ? "127.0.0.1" : host
        if asked.contains(":"), !asked.hasPrefix("[") { asked = "[\(asked)]" }
        return "http://\(asked):\(port)/health"
    }
}
