import ArgumentParser
import Foundation
import Hummingbird
import Imago
import ImagoSandbox
import ImagoServer
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

#if IMAGO_OTEL
    import OTel
#endif

/// `imago serve`: the image service. Its settings are
/// ``ServeConfiguration/settings``: every one a flag and an `IMAGO_*`
/// variable, listed by `--help` from that one table.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve thumbnails of remote images: /{signature}/{options}/{source}.",
        discussion: "Settings (a flag wins over its variable):\n" + ServeConfiguration.settingsHelp
    )

    @Argument(parsing: .allUnrecognized, help: .hidden)
    var arguments: [String] = []

    func run() async throws {
        var settings: ServeConfiguration
        do {
            settings = try ServeConfiguration(flags: ServeConfiguration.flags(from: arguments), environment: ProcessInfo.processInfo.environment)
            try settings.validate()
        } catch {
            throw ValidationError(error.description)
        }
        let format = settings.logFormat
        let level = settings.logLevel
        LoggingSystem.bootstrap { LineLogHandler(label: $0, format: format, level: level) }
        // Before the service, whose HTTP clients take the tracer they find when made.
        let traces = try Self.traces(environment: ProcessInfo.processInfo.environment)
        // Kept until the server stops: the demo's source.
        let origin = settings.demo ? try await Self.startDemo(&settings) : nil
        let logger = Logger(label: "imago.serve")
        // One registry for the service's metrics and the pipeline's (swift-metrics).
        let metrics = ServiceMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let service: ImageService
        do {
            try FileManager.default.createDirectory(atPath: settings.service.cacheFolder ?? ".", withIntermediateDirectories: true)
            service = try ImageService(configuration: settings.service, metrics: metrics, logger: logger)
        } catch {
            Terminal.error("cannot use the cache folder: \(error)")
            throw ExitCode(ExitStatus.cacheUnavailable)
        }
        if settings.service.signing == nil, !settings.service.allowsUnsigned, settings.service.allowedSizes.isEmpty {
            if settings.service.thumbor?.isEnabled == true {
                logger.info("no IMAGO_KEY/IMAGO_SALT and no --allow-unsigned: thumbor's URLs are at the root")
            } else {
                logger.warning("no IMAGO_KEY/IMAGO_SALT and no --allow-unsigned: every image URL will be refused")
            }
        }
        let (host, port) = try settings.address
        let demo = settings.demo
        let readiness = Readiness()
        let app = ServeApplication.application(
            service: service, host: host, port: port, logger: logger, servesMetrics: settings.adminBind == nil && settings.metricsBind == nil,
            traces: traces != nil, readiness: readiness, idleTimeout: settings.idleTimeout, writeTimeout: settings.writeTimeout
        ) { port in
            // One line on stdout that scripts wait for (the port may have been 0).
            print(demo ? "demo: http://\(host):\(port)/" : "imago serve: listening on http://\(host):\(port)/")
            fflush(nil)
        }
        // The exporter first, so that it stops last and sends the final
        // spans; then the image service, which stops once the servers after
        // it have drained: it waits for the writes to its caches, saves
        // their index snapshots and closes its loaders' connections.
        var apps: [any Service] = (traces.map { [$0] } ?? []) + [service, app]
        if let adminBind = settings.adminBind, let token = settings.adminToken {
            let (host, port) = try ServeConfiguration.address(adminBind)
            let router = ServeApplication.adminRouter(service: service, token: token, logger: logger)
            apps.append(
                ServeApplication.application(router: router, host: host, port: port, logger: logger) { port in
                    print("imago serve: admin on http://\(host):\(port)/")
                    fflush(nil)
                })
        }
        if let metricsBind = settings.metricsBind {
            let (host, port) = try ServeConfiguration.address(metricsBind)
            apps.append(
                ServeApplication.application(router: ServeApplication.metricsRouter(service: service), host: host, port: port, logger: logger) {
                    port in
                    print("imago serve: metrics on http://\(host):\(port)/metrics")
                    fflush(nil)
                })
        }
        // Last, so that it is the first told of a shutdown: /ready fails
        // before the listener closes.
        apps.append(readiness)
        // Returns once SIGTERM or SIGINT has stopped the server and the
        // requests in flight have been answered, or the drain timeout has
        // cancelled the rest. Whatever stopped it (a signal, a port already
        // taken), the image service has shut down whole.
        let stopped: Result<Void, any Error>
        do {
            try await ServeApplication.serviceGroup(apps, drainTimeout: settings.drainTimeout, logger: logger).run()
            stopped = .success(())
        } catch {
            stopped = .failure(error)
        }
        try? await origin?.shutdown()
        try stopped.get()
        logger.info("stopped; the cache's index snapshot is saved")
    }

    /// The OpenTelemetry exporter of traces, bootstrapped as the process's
    /// tracer, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its `_TRACES_` form)
    /// is set and `OTEL_SDK_DISABLED` is not `true`; else nil, and no span
    /// is made. OTLP over HTTP, protobuf unless `OTEL_EXPORTER_OTLP_PROTOCOL`
    /// is `http/json`; swift-otel reads the other `OTEL_*` variables
    /// (service name, sampler, batch delays, headers).
    private static func traces(environment: [String: String]) throws(ValidationError) -> (any Service)? {
        let endpoints = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].compactMap { environment[$0] }
        guard endpoints.contains(where: { !$0.isEmpty }), environment["OTEL_SDK_DISABLED"]?.lowercased() != "true" else { return nil }
        #if IMAGO_OTEL
            // swift-otel stops the process for a transport it was built without: named here instead.
            let transport = environment["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] ?? environment["OTEL_EXPORTER_OTLP_PROTOCOL"] ?? "http/protobuf"
            guard ["http/protobuf", "http/json"].contains(transport) else {
                throw ValidationError("OTEL_EXPORTER_OTLP_PROTOCOL: imago exports over http/protobuf or http/json, not \(transport)")
            }
            var configuration = OTel.Configuration.default
            configuration.serviceName = "imago"
            configuration.diagnosticLogger = .custom(Logger(label: "imago.otel"))
            configuration.logs.enabled = false
            configuration.metrics.enabled = false
            do {
                return try OTel.bootstrap(configuration: configuration, environment: environment)
            } catch {
                throw ValidationError("OpenTelemetry (OTEL_* variables): \(error)")
            }
        #else
            throw ValidationError("OTEL_EXPORTER_OTLP_ENDPOINT: this imago was built without the OTLP exporter (IMAGO_WITHOUT_OTEL)")
        #endif
    }

    /// Starts the demo's source (a generated gallery on 127.0.0.1) and
    /// opens the service to it: that address, unsigned URLs, and the pages.
    private static func startDemo(_ settings: inout ServeConfiguration) async throws -> TestImageServer {
        let gallery = try Gallery(count: 48)
        let origin = try await TestImageServer.start(host: "127.0.0.1")
        origin.serve(gallery)
        var configuration = settings.service
        configuration.allowsUnsigned = true
        if let loopback = IPNetwork("127.0.0.1/32") { configuration.sourcePolicy.allowedNetworks.append(loopback) }
        // With no prefixes of the user's, unsigned URLs could reach any
        // loopback port: the demo keeps them to its gallery.
        configuration.sourcePolicy.allowedPrefixes.append(origin.url("/gallery/").absoluteString)
        configuration.demo = DemoSite(
            sources: gallery.items.map { DemoSite.Source(url: origin.url($0.path), width: $0.width, height: $0.height) },
            signing: configuration.signing
        )
        settings.service = configuration
        return origin
    }
}
