import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import Synchronization

@testable import ImagoServer

/// A request as a test sends it: the path as it goes on the wire.
struct ServiceRequest {
    var method: HTTPRequest.Method = .get
    var path: String
    var headers: HTTPFields

    init(method: HTTPRequest.Method = .get, path: String, headers: HTTPFields = [:]) {
        self.method = method
        self.path = path
        self.headers = headers
    }
}

/// What a test reads of an answer.
struct ServiceResponse {
    var status: Int
    var headers: HTTPFields
    var body: Data
}

extension ImageService {
    /// Answers `request` through `imago serve`'s router, as a socket would
    /// reach it (request ids, access log, metrics, routes, errors turned
    /// into answers), without a socket.
    func respond(to request: ServiceRequest) async -> ServiceResponse {
        let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let responder = ServeApplication.router(service: self, logger: quiet).buildResponder()
        let context = ImageRequestContext(source: .init(channel: NIOAsyncTestingChannel(), logger: quiet))
        let head = HTTPRequest(method: request.method, scheme: "http", authority: "localhost", path: request.path, headerFields: request.headers)
        let response: Response
        do {
            response = try await responder.respond(to: Request(head: head, body: RequestBody(buffer: ByteBuffer())), context: context)
        } catch {
            return ServiceResponse(status: 500, headers: [:], body: Data("\(error)".utf8))
        }
        let collector = BodyCollector()
        try? await response.body.write(collector)
        return ServiceResponse(status: response.status.code, headers: response.headers, body: collector.bytes)
    }
}

/// Keeps what a response body writes.
private struct BodyCollector: ResponseBodyWriter {
    private let buffer = Box()

    var bytes: Data { buffer.data.withLock { $0 } }

    mutating func write(_ buffer: ByteBuffer) async throws {
        self.buffer.data.withLock { $0.append(contentsOf: buffer.readableBytesView) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}

    private final class Box: Sendable {
        let data = Mutex(Data())
    }
}
