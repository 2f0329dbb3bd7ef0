import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

extension ServeApplication {
    /// The admin listener's routes, every one behind `Authorization: Bearer
    /// token` (else a 401, and nothing done): `POST /purge?source=SOURCE`
    /// removes every cached answer of a source and the source itself
    /// (``ImageService/purge(source:)``) and says how many entries went, as
    /// JSON; `GET /metrics` as on the public port.
    public static func adminRouter(service: ImageService, token: String, logger: Logger) -> Router<ImageRequestContext> {
        let router = Router(context: ImageRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: AccessLogMiddleware(logger: logger))
        router.add(middleware: BearerTokenMiddleware(token: token))
        router.post("purge") { request, _ -> Response in
            guard let source = request.uri.queryParameters["source"].map(String.init), !source.isEmpty else {
                throw ServiceError(.badRequest, "expected /purge?source=URL-ENCODED-SOURCE")
            }
            let removed = try await service.purge(source: source)
            let body = try JSONEncoder().encode(PurgeAnswer(source: source, removed: removed))
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        addMetrics(to: router, service: service)
        return router
    }

    /// What `POST /purge` answers: the source, and how many entries went.
    struct PurgeAnswer: Codable {
        var source: String
        var removed: Int
    }

    /// A router serving `/metrics` alone, for `--metrics-bind`.
    public static func metricsRouter(service: ImageService) -> Router<ImageRequestContext> {
        let router = Router(context: ImageRequestContext.self)
        addMetrics(to: router, service: service)
        return router
    }

    static func addMetrics(to router: Router<ImageRequestContext>, service: ImageService) {
        router.get("metrics") { _, _ in
            let text = service.metrics.exposition(queueLength: service.admission.queueLength)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: text))
            )
        }
    }
}

/// A 401 for a request without `Authorization: Bearer TOKEN`, the token
/// compared in constant time.
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let given = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil } ?? ""
        // Digests first: equal lengths, so the comparison takes the same time whatever was sent.
        let matches = SHA256.hash(data: Data(given.utf8)) == SHA256.hash(data: Data(token.utf8))
        guard matches, !given.isEmpty else {
            throw ServiceError(.unauthorized, "expected Authorization: Bearer with the admin token", headers: [.wwwAuthenticate: "Bearer"])
        }
        return try await next(request, context)
    }
}
