import HTTPTypes
import Hummingbird

/// Gives every request an id: the client's `X-Request-ID` when it is short
/// and plain (letters, digits, `-`, `_`, `.`), so that it can go into logs
/// as it is, else a new one; the answer carries it back.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = ImageRequestContext

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.requestID = request.headers[.requestID].flatMap(Self.wellFormed) ?? RequestID.next()
        do {
            var response = try await next(request, context)
            response.headers[.requestID] = context.requestID
            return response
        } catch var error as ServiceError {
            error.headers[.requestID] = context.requestID
            throw error
        }
    }

    /// `value` if it is short and plain enough to log as it is.
    static func wellFormed(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count), value.utf8.allSatisfy(Self.isPlain) else { return nil }
        return value
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}

extension HTTPField.Name {
    /// `X-Request-ID`: the id a request is logged under.
    static let requestID = HTTPField.Name("X-Request-ID")!
}
