import Hummingbird
import Logging

/// One log line per request, once it is answered: its id, method, path
/// (an image URL's signature left out), status, body bytes, duration, and
/// for images where the answer came from and the source's host.
public struct AccessLogMiddleware: RouterMiddleware {
    public typealias Context = ImageRequestContext
    let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(
                request, context, status: response.status.code,
                bytes: response.headers[.contentLength] ?? response.body.contentLength.map(String.init), since: start)
            return response
        } catch let error as ServiceError {
            log(request, context, status: error.status.code, bytes: String(error.message.utf8.count + 1), since: start)
            throw error
        } catch let error as any HTTPResponseError {
            log(request, context, status: error.status.code, bytes: nil, since: start)
            throw error
        }
    }

    private func log(_ request: Request, _ context: Context, status: Int, bytes: String?, since start: ContinuousClock.Instant) {
        guard logger.logLevel <= .info else { return }
        let report = context.report.current
        let path = report.unsignedPath ?? request.uri.path
        logger.info(
            "\(request.method.rawValue) \(path) \(status)",
            metadata: [
                "request_id": .string(context.requestID),
                "method": .string(request.method.rawValue),
                "path": .string(path),
                "status": .stringConvertible(status),
                "bytes": .string(bytes ?? "-"),
                "ms": .string(Self.milliseconds(start.duration(to: .now))),
                "cache": .string(report.cacheOutcome?.rawValue ?? "-"),
                "source_host": .string(report.sourceHost ?? "-"),
            ])
    }

    /// `duration` in milliseconds with one decimal, rounded half up,
    /// without `String(format:)`, which is slow on Linux.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = max(0, seconds * 10_000 + (attoseconds + 50_000_000_000_000) / 100_000_000_000_000)
        return "\(tenths / 10).\(tenths % 10)"
    }
}
