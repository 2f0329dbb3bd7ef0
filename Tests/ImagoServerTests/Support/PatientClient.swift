import AsyncHTTPClient
import Foundation
import HTTPTypes
import Imago
import NIOCore
import NIOHTTP1

/// Timeouts for a test's own requests to a server it runs: ten minutes,
/// so that however slowly a loaded machine (ThreadSanitizer, both cores
/// busy) answers, the test waits for the answer, not for the clock.
enum Patient {
    static let timeout = Duration.seconds(600)

    /// A loader whose connections, reads and requests may each take ``timeout``.
    static func loader() -> HTTPDataLoader {
        HTTPDataLoader(configuration: .init(connectTimeout: timeout, readTimeout: timeout, requestTimeout: timeout))
    }

    /// Sends `request` to `base` (such as `http://127.0.0.1:8080`) over a
    /// real socket and reads the whole answer.
    static func send(_ request: ServiceRequest, to base: String) async throws -> ServiceResponse {
        var outgoing = HTTPClientRequest(url: base + request.path)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        let response = try await HTTPClient.shared.execute(outgoing, timeout: TimeAmount(timeout))
        let body = try await response.body.collect(upTo: 64 << 20)
        var headers = HTTPFields()
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
        }
        return ServiceResponse(status: Int(response.status.code), headers: headers, body: Data(buffer: body))
    }
}
