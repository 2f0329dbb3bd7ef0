import Foundation
import Imago

extension TestImageServer {
    /// What the server answers on a path, and how it misbehaves.
    public struct Response: Sendable {
        /// How the body is sent.
        public enum Behaviour: Sendable, Equatable {
            /// The whole body with a correct Content-Length.
            case normal
            /// Declares the full Content-Length, sends `after` bytes, then closes the connection.
            case truncate(after: Int)
            /// Declares the full Content-Length, sends `after` bytes, then sends nothing more
            /// (the connection stays open until the client gives up or the server stops).
            case stall(after: Int)
            /// Closes the connection without answering.
            case reset
            /// Sends the body `chunkSize` bytes at a time, `interval` apart.
            case drip(chunkSize: Int, interval: Duration)
            /// Sends the body chunked, with no Content-Length.
            case omitContentLength
            /// Declares `length` as the Content-Length but sends the whole body.
            case declaredLength(Int)
            /// Sends the body chunked, over and over, until the client goes away.
            case endless
        }

        /// The HTTP status code.
        public var status: Int
        /// Response fields (Content-Length is added unless the behaviour omits it).
        public var headers: HTTPFields
        /// The body.
        public var body: Data
        /// How long to wait before sending the response head.
        public var delay: Duration
        /// How the body is sent.
        public var behaviour: Behaviour

        /// Creates a response.
        public init(
            status: Int = 200,
            headers: HTTPFields = [:],
            body: Data = Data(),
            delay: Duration = .zero,
            behaviour: Behaviour = .normal
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
            self.behaviour = behaviour
        }

        /// This response, or a 304 with its headers and no body if it is a
        /// 200 whose ETag the request's If-None-Match names.
        func answering(_ request: Request) -> Response {
            guard status == 200, let etag = headers.first(.eTag), let asked = request.headers.first(.ifNoneMatch),
                asked.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag || $0 == "*" })
            else { return self }
            return Response(status: 304, headers: headers, delay: delay)
        }

        /// A redirect to `location` (a path on this server or a full URL).
        public static func redirect(to location: String, status: Int = 302) -> Response {
            Response(status: status, headers: [.location: location])
        }

        /// `count` seeded random bytes served as if they were a JPEG.
        public static func garbage(count: Int, seed: UInt64 = 1) -> Response {
            var generator = SeededGenerator(seed: seed)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return Response(headers: [.contentType: "image/jpeg"], body: Data(bytes))
        }

        /// An HTML error page with status 200, as some servers send instead of an image.
        public static let htmlErrorPage = Response(
            headers: [.contentType: "text/html"],
            body: Data("<!DOCTYPE html><html><body><h1>Something went wrong</h1></body></html>".utf8)
        )
    }

    /// A request as the server saw it.
    public struct Request: Sendable {
        /// The method, e.g. "GET".
        public var method: String
        /// The path, with its query.
        public var uri: String
        /// The request fields, in order.
        public var headers: HTTPFields
    }
}
