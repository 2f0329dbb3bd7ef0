import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `imago serve`: an ``ImageService``'s routes on Hummingbird's HTTP/1.1
/// server, behind the request-id, access-log and metrics middleware, with
/// `/health`, `/ready`, `/metrics` and, in the demo, its pages. Run it in
/// ``serviceGroup(_:drainTimeout:logger:)``, which stops gracefully on
/// SIGTERM or SIGINT: no new connections, the requests in flight answered,
/// then exit.
public enum ServeApplication {
    /// The router `imago serve` answers with.
    /// The public routes; `servesMetrics: false` leaves `/metrics` to
    /// another listener (``adminRouter(service:token:logger:)``, ``metricsRouter(service:)``).
    /// With `traces`, each request is a span of the bootstrapped tracer
    /// (Hummingbird's `TracingMiddleware`, which continues a W3C
    /// `traceparent`), the parent of the service's own spans.
    public static func router(
        service: ImageService, logger: Logger, servesMetrics: Bool = true, traces: Bool = false, readiness: Readiness = Readiness()
    ) -> Router<ImageRequestContext> {
        let router = Router(context: ImageRequestContext.self)
        if traces { router.add(middleware: TracingMiddleware()) }
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: AccessLogMiddleware(logger: logger))
        router.add(middleware: MetricsMiddleware(service.metrics))
        router.add(middleware: MethodsMiddleware(errorMaxAge: service.configuration.errorMaxAge))
        router.get("health") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        // Liveness is /health; /ready fails from the start of a drain, so a
        // load balancer sends new requests elsewhere.
        router.get("ready") { _, _ in
            let ready = readiness.isReady
            return Response(
                status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: ready ? "ready\n" : "draining\n")))
        }
        if servesMetrics { addMetrics(to: router, service: service) }
        if let demo = service.configuration.demo { demo.addRoutes(to: router) }
        router.get("favicon.ico") { _, _ -> Response in throw ServiceError(.notFound, "not found: image URLs are /{signature}/{options}/{source}") }
        router.addRoutes(service.routes(context: ImageRequestContext.self))
        return router
    }

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
        service: ImageService, host: String, port: Int, logger: Logger, servesMetrics: Bool = true, traces: Bool = false,
        readiness: Readiness = Readiness(), idleTimeout: Duration = .seconds(30), writeTimeout: Duration = .seconds(120),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        application(
            router: router(service: service, logger: logger, servesMetrics: servesMetrics, traces: traces, readiness: readiness), host: host,
            port: port, logger: logger,
            idleTimeout: idleTimeout, writeTimeout: writeTimeout, onServerRunning: onServerRunning)
    }

    /// An application serving `router` on `host`:`port`, with the same timeouts.
    public static func application(
        router: Router<ImageRequestContext>, host: String, port: Int, logger: Logger,
        idleTimeout: Duration = .seconds(30), writeTimeout: Duration = .seconds(120),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let writeTimeout = TimeAmount.nanoseconds(writeTimeout.nanoseconds)
        return Application(
            router: router,
            server: .http1(
                configuration: .init(
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
    public static func serviceGroup(_ apps: [any Service], drainTimeout: Duration, logger: Logger) -> ServiceGroup {
        var configuration = ServiceGroupConfiguration(services: apps, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = drainTimeout
        return ServiceGroup(configuration: configuration)
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
