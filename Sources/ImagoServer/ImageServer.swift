import Foundation
import HTTPTypes
import Hummingbird
import ImagoCaching
import Logging
import NIOCore
import ServiceLifecycle

/// `imago serve`: the ``ImageService`` behind Hummingbird's HTTP/1.1 server,
/// with an access log line per request. Run it in ``serviceGroup(_:drainTimeout:logger:)``,
/// which stops gracefully on SIGTERM or SIGINT: no new connections, the
/// requests in flight answered, then exit.
public enum ImageServer {
    /// The application serving `service` on `host`:`port`.
    ///
    /// A connection that sends no whole request part (a request head, a
    /// body chunk) for `idleTimeout` is closed: idle keep-alive and clients
    /// that send their headers a byte at a time. One whose answer has not
    /// been taken off the socket for `writeTimeout` is closed too: a client
    /// that stopped reading. The write timeout must exceed the longest
    /// request (the queue's deadline plus the source timeout), since no
    /// write completes while a request waits.
    public static func application(
        service: ImageService, host: String, port: Int, logger: Logger,
        idleTimeout: Duration = .seconds(30), writeTimeout: Duration = .seconds(120),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let responder = CallbackResponder { (request: Request, _: BasicRequestContext) -> Response in
            await respond(to: request, service: service, logger: logger)
        }
        let writeTimeout = TimeAmount.nanoseconds(writeTimeout.nanoseconds)
        return Application(
            responder: responder,
            server: .http1(configuration: .init(
                additionalChannelHandlers: [IdleStateHandler(writeTimeout: writeTimeout), CloseOnIdleWrites()],
                idleTimeout: .nanoseconds(idleTimeout.nanoseconds)
            )),
            configuration: .init(address: .hostname(host, port: port), serverName: "Imago"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    /// What runs `app` until SIGTERM or SIGINT (or a triggered graceful
    /// shutdown), then stops accepting connections and gives the requests
    /// in flight `drainTimeout` to be answered; those still running then
    /// are cancelled.
    public static func serviceGroup(_ app: some ApplicationProtocol, drainTimeout: Duration, logger: Logger) -> ServiceGroup {
        var configuration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = drainTimeout
        return ServiceGroup(configuration: configuration)
    }

    static func respond(to request: Request, service: ImageService, logger: Logger) async -> Response {
        let start = ContinuousClock.now
        let requestID = request.headers[values: .init("X-Request-ID")!].first.flatMap(Self.wellFormedRequestID) ?? RequestID.next()
        let answer = await service.respond(to: ServiceRequest(
            method: request.method.rawValue,
            path: request.uri.path,
            headers: request.headers.map { ($0.name.rawName, $0.value) }
        ))
        var fields = HTTPFields()
        for (name, value) in answer.headers + [("X-Request-ID", requestID)] {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        let elapsed = start.duration(to: .now)
        logger.info("\(request.method.rawValue) \(request.uri.path) \(answer.status)", metadata: [
            "status": "\(answer.status)",
            "cache": "\(answer.cacheOutcome?.rawValue ?? "-")",
            "bytes": "\(answer.header("Content-Length") ?? String(answer.bytes.readableBytes))",
            "ms": "\(Self.milliseconds(elapsed))",
            "request_id": "\(requestID)",
        ])
        let body = answer.bytes.readableBytes == 0 ? ResponseBody() : ResponseBody(byteBuffer: answer.bytes)
        return Response(status: HTTPResponse.Status(code: answer.status), headers: fields, body: body)
    }

    /// `duration` in milliseconds with one decimal, as the access log
    /// prints it (String(format:) cost 1% of a result-cache hit).
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = max(0, seconds * 10_000 + (attoseconds + 50_000_000_000_000) / 100_000_000_000_000)
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// A client's request id, if it is short and plain (letters, digits,
    /// `-`, `_`, `.`), so that it can go into logs as it is.
    static func wellFormedRequestID(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count),
              value.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") })
        else { return nil }
        return value
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}

/// Closes a connection when its ``IdleStateHandler`` says no write has
/// completed for its write timeout: the client has stopped reading, and
/// its answers would otherwise wait in memory for as long as it stays.
final class CloseOnIdleWrites: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .write {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
