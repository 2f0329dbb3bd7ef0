import Foundation
import Hummingbird
import Imago
import ImagoCodecFixtures
import ImagoSandbox
import Logging
import NIOEmbedded
import Synchronization
import Testing

@testable import ImagoServer

@Suite("Log lines: text, JSON and logfmt, and the access line's fields")
struct LogLinesTests {
    /// The lines a logger wrote.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var last: String? { lines.withLock { $0.last } }
        func append(_ line: String) { lines.withLock { $0.append(line) } }
    }

    /// A logger whose lines land in `lines`.
    static func logger(_ format: ServeConfiguration.LogFormat, into lines: Lines) -> Logger {
        Logger(label: "imago.serve") { label in LineLogHandler(label: label, format: format, write: lines.append) }
    }

    @Test("each format writes one line a message, escaping what would break it")
    func formats() throws {
        let time = Date(timeIntervalSince1970: 1_764_099_609.123_9)
        let fields: Logger.Metadata = ["path": "/a b\"c", "status": "200", "note": "line\nbreak", "x=y": .stringConvertible(7)]
        func line(_ format: ServeConfiguration.LogFormat) -> String {
            LineLogHandler(label: "imago.serve", format: format) { _ in }.line(time: time, level: .info, message: "GET /a 200", fields: fields)
        }
        #expect(line(.text) == "2025-11-25T19:40:09.123Z info imago.serve: GET /a 200 note=line\nbreak path=/a b\"c status=200 x=y=7\n")
        #expect(
            line(.logfmt)
                == "time=2025-11-25T19:40:09.123Z level=info logger=imago.serve msg=\"GET /a 200\" note=\"line\\nbreak\" path=\"/a b\\\"c\" status=200 x_y=7\n"
        )
        let json = line(.json)
        #expect(json.hasSuffix("}\n") && json.split(separator: "\n").count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(
            object == [
                "time": "2025-11-25T19:40:09.123Z", "level": "info", "logger": "imago.serve", "message": "GET /a 200",
                "note": "line\nbreak", "path": "/a b\"c", "status": "200", "x=y": "7",
            ])
        #expect(LineLogHandler.jsonString("\u{1}\u{7f}\\") == "\"\\u0001\\u007f\\\\\"")
        #expect(HTTPDate.iso8601(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(HTTPDate.iso8601(Date(timeIntervalSince1970: 951_782_400.007)) == "2000-02-29T00:00:00.007Z")
    }

    @Test("the access line: request id, method, path without the signature, status, bytes, duration, cache outcome, source host")
    func accessLine() async throws {
        let source = try await TestImageServer.start(host: "127.0.0.2")
        source.setRoute("/photo.jpg", .init(body: try JPEGEncoder().encode(FormatFixtures.quadrants(width: 120, height: 90))))
        let folder = TemporaryDirectory()
        let service = ImageServiceTests.service(in: folder, signedOnly: true)
        let lines = Lines()
        let responder = ServeApplication.router(service: service, logger: Self.logger(.logfmt, into: lines)).buildResponder()
        let path = ImageServiceTests.path("w:60/f:png", source.url("/photo.jpg"), signature: "sign")
        let signature = String(path.dropFirst().prefix { $0 != "/" })
        for (id, expected) in [("first", "miss"), ("second", "hit")] {
            let context = ImageRequestContext(source: .init(channel: NIOAsyncTestingChannel(), logger: Logger(label: "test")))
            let head = HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: path, headerFields: [.requestID: id])
            let response = try await responder.respond(to: Request(head: head, body: RequestBody(buffer: ByteBuffer())), context: context)
            #expect(response.status == .ok)
            let line = try #require(lines.last)
            let length = response.body.contentLength ?? -1
            for field in [
                "request_id=\(id)", "method=GET", "path=/-/w:60/f:png/", "status=200", "bytes=\(length)", "cache=\(expected)",
                "source_host=127.0.0.2", " ms=",
            ] {
                #expect(line.contains(field), "\(field) in \(line)")
            }
            #expect(!line.contains(signature), "the signature is not logged: \(line)")
        }
        try await source.shutdown()
    }
}
