import ArgumentParser
import Foundation
import Hummingbird
import Imago
import ImagoSandbox
import ImagoServer
import Logging
import Metrics
import Prometheus

/// `imago serve`: the image service. Every flag has an `IMAGO_*` variable;
/// the signing secrets are variables only, so they never show in `ps`.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve thumbnails of remote images: /{signature}/{options}/{source}.",
        discussion: """
            Environment: IMAGO_BIND, IMAGO_CACHE, IMAGO_ALLOWED_SOURCES and IMAGO_ALLOWED_SOURCE_NETWORKS \
            (comma-separated), IMAGO_MAX_AGE, IMAGO_ERROR_MAX_AGE, IMAGO_IDLE_TIMEOUT, IMAGO_WRITE_TIMEOUT and IMAGO_DRAIN_TIMEOUT stand for the flags; IMAGO_KEY and \
            IMAGO_SALT (hex, comma-separated pairs for rotation) sign URLs. A flag wins over its variable.
            """
    )

    @Option(help: "Address and port to listen on (IMAGO_BIND; default 127.0.0.1:8080).")
    var bind: String?

    @Option(help: "The folder caching sources (IMAGO_CACHE; default $XDG_CACHE_HOME/imago/serve or ~/.cache/imago/serve).")
    var cache: String?

    @Option(name: .customLong("allowed-sources"), help: "A URL prefix sources must start with; repeatable (IMAGO_ALLOWED_SOURCES).")
    var allowedSources: [String] = []

    @Option(name: .customLong("allow-source-network"), help: "A CIDR range opened despite being loopback or private; repeatable (IMAGO_ALLOWED_SOURCE_NETWORKS).")
    var allowSourceNetworks: [String] = []

    @Flag(help: "Serve unsigned URLs (signature segment 'unsafe').")
    var allowUnsigned = false

    @Option(name: .customLong("allowed-size"), help: "WIDTHxHEIGHT an unsigned URL may ask for (w:/h:, 0 for a free side); repeatable (IMAGO_ALLOWED_SIZES).")
    var allowedSizes: [String] = []

    @Option(name: .customLong("preset"), help: "NAME=OPTIONS, e.g. thumb=w:256/h:256/fit:crop, for p:NAME; repeatable (IMAGO_PRESETS, ';'-separated).")
    var presets: [String] = []

    @Option(name: .customLong("max-age"), help: "Cache-Control max-age of images, in seconds, at most the source's remaining freshness (IMAGO_MAX_AGE; default 86400).")
    var maxAge: Int?

    @Option(name: .customLong("error-max-age"), help: "Cache-Control max-age of error answers, in seconds (IMAGO_ERROR_MAX_AGE; default 10).")
    var errorMaxAge: Int?

    @Option(name: .customLong("drain-timeout"), help: "Seconds the requests in flight get to finish after SIGTERM (IMAGO_DRAIN_TIMEOUT; default 30).")
    var drainTimeout: Int?

    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may send no whole request part before it is closed: idle keep-alive, slow headers (IMAGO_IDLE_TIMEOUT; default 30).")
    var idleTimeout: Int?

    @Option(name: .customLong("write-timeout"), help: "Seconds an answer may wait for a client that does not read before the connection is closed; more than the queue's 10 s plus the source timeout (IMAGO_WRITE_TIMEOUT; default 120).")
    var writeTimeout: Int?

    @Option(name: .customLong("source-disk-limit"), help: "MiB the cached sources may take on disk (IMAGO_SOURCE_DISK_LIMIT; default 1024).")
    var sourceDiskLimit: Int?

    @Option(name: .customLong("result-disk-limit"), help: "MiB the cached answers may take on disk (IMAGO_RESULT_DISK_LIMIT; default 1024).")
    var resultDiskLimit: Int?

    @Flag(help: "Keep every fetched source in the cache folder, not only those fetched a second time.")
    var keepEverySource = false

    @Flag(help: "Also serve a generated gallery as the source, and pages at / with its thumbnails (unsigned URLs allowed; sources limited to the gallery unless --allowed-sources is given).")
    var demo = false

    func run() async throws {
        // While TZ is unset, glibc's strftime looks at /etc/localtime again
        // on every call (a stat for each access-log line); named, the same
        // zone is read once. Set before the server's threads start.
        if getenv("TZ") == nil { setenv("TZ", ":/etc/localtime", 0) }
        let environment = ProcessInfo.processInfo.environment
        var settings = try ServeSettings(
            bind: bind ?? environment["IMAGO_BIND"] ?? "127.0.0.1:8080",
            cache: cache ?? environment["IMAGO_CACHE"] ?? Terminal.defaultCacheFolder + "/serve",
            allowedSources: allowedSources.isEmpty ? Self.list(environment["IMAGO_ALLOWED_SOURCES"]) : allowedSources,
            allowedNetworks: allowSourceNetworks.isEmpty ? Self.list(environment["IMAGO_ALLOWED_SOURCE_NETWORKS"]) : allowSourceNetworks,
            keys: environment["IMAGO_KEY"],
            salts: environment["IMAGO_SALT"],
            allowUnsigned: allowUnsigned,
            allowedSizes: allowedSizes.isEmpty ? Self.list(environment["IMAGO_ALLOWED_SIZES"]) : allowedSizes,
            presets: presets.isEmpty ? Self.list(environment["IMAGO_PRESETS"], separator: ";") : presets,
            maxAge: maxAge ?? environment["IMAGO_MAX_AGE"].map { try Self.seconds($0, "IMAGO_MAX_AGE") },
            errorMaxAge: errorMaxAge ?? environment["IMAGO_ERROR_MAX_AGE"].map { try Self.seconds($0, "IMAGO_ERROR_MAX_AGE") },
            idleTimeout: idleTimeout ?? environment["IMAGO_IDLE_TIMEOUT"].map { try Self.seconds($0, "IMAGO_IDLE_TIMEOUT") },
            writeTimeout: writeTimeout ?? environment["IMAGO_WRITE_TIMEOUT"].map { try Self.seconds($0, "IMAGO_WRITE_TIMEOUT") },
            drainTimeout: drainTimeout ?? environment["IMAGO_DRAIN_TIMEOUT"].map { try Self.seconds($0, "IMAGO_DRAIN_TIMEOUT") },
            sourceDiskLimit: sourceDiskLimit ?? environment["IMAGO_SOURCE_DISK_LIMIT"].map { try Self.mebibytes($0, "IMAGO_SOURCE_DISK_LIMIT") },
            resultDiskLimit: resultDiskLimit ?? environment["IMAGO_RESULT_DISK_LIMIT"].map { try Self.mebibytes($0, "IMAGO_RESULT_DISK_LIMIT") }
        )
        if keepEverySource { settings.configuration.sourceAdmission = .always }
        // Kept until the server stops: the demo's source.
        let origin = demo ? try await Self.startDemo(&settings) : nil
        var logger = Logger(label: "imago.serve")
        logger.logLevel = .info
        // One registry for the service's metrics and the pipeline's (swift-metrics).
        let metrics = ServiceMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let service: ImageService
        do {
            try FileManager.default.createDirectory(atPath: settings.configuration.cacheFolder ?? ".", withIntermediateDirectories: true)
            service = try ImageService(configuration: settings.configuration, metrics: metrics, logger: logger)
        } catch {
            Terminal.error("cannot use the cache folder: \(error)")
            throw ExitCode(ExitStatus.cacheUnavailable)
        }
        if settings.configuration.signing == nil, !settings.configuration.allowsUnsigned {
            logger.warning("no IMAGO_KEY/IMAGO_SALT and no --allow-unsigned: every image URL will be refused")
        }
        let host = settings.host
        let app = ImageServer.application(
            service: service, host: host, port: settings.port, logger: logger,
            idleTimeout: settings.idleTimeout, writeTimeout: settings.writeTimeout
        ) { [demo] port in
            // One line on stdout that scripts wait for (the port may have been 0).
            print(demo ? "demo: http://\(host):\(port)/" : "imago serve: listening on http://\(host):\(port)/")
            fflush(nil)
        }
        // Returns once SIGTERM or SIGINT has stopped the server and the
        // requests in flight have been answered, or the drain timeout has
        // cancelled the rest.
        let stopped: Result<Void, any Error>
        do {
            try await ImageServer.serviceGroup(app, drainTimeout: settings.drainTimeout, logger: logger).run()
            stopped = .success(())
        } catch {
            stopped = .failure(error)
        }
        // Whatever stopped it (a signal, a port already taken), the caches are closed whole.
        service.close()
        try? await origin?.shutdown()
        try stopped.get()
        logger.info("stopped; the cache's index snapshot is saved")
    }

    /// Starts the demo's source (a generated gallery on 127.0.0.1) and
    /// opens the service to it: that address, unsigned URLs, and the pages.
    private static func startDemo(_ settings: inout ServeSettings) async throws -> TestImageServer {
        let gallery = try Gallery(count: 48)
        let origin = try await TestImageServer.start(host: "127.0.0.1")
        origin.serve(gallery)
        var configuration = settings.configuration
        configuration.allowsUnsigned = true
        if let loopback = IPNetwork("127.0.0.1/32") { configuration.sourcePolicy.allowedNetworks.append(loopback) }
        // With no prefixes of the user's, unsigned URLs could reach any
        // loopback port: the demo keeps them to its gallery.
        configuration.sourcePolicy.allowedPrefixes.append(origin.url("/gallery/").absoluteString)
        configuration.demo = DemoSite(
            sources: gallery.items.map { DemoSite.Source(url: origin.url($0.path), width: $0.width, height: $0.height) },
            signing: configuration.signing
        )
        settings.configuration = configuration
        return origin
    }

    static func seconds(_ text: String, _ name: String) throws -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { throw ValidationError("\(name) \(text): expected seconds") }
        return value
    }

    static func mebibytes(_ text: String, _ name: String) throws -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { throw ValidationError("\(name) \(text): expected MiB") }
        return value
    }

    static func list(_ value: String?, separator: Character = ",") -> [String] {
        (value ?? "").split(separator: separator).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// `imago serve`'s settings, read and checked: a bad value stops the
/// command with a usage error naming it.
struct ServeSettings {
    var host: String
    var port: Int
    var idleTimeout: Duration
    var writeTimeout: Duration
    var drainTimeout: Duration
    var configuration: ImageService.Configuration

    init(
        bind: String, cache: String, allowedSources: [String], allowedNetworks: [String],
        keys: String?, salts: String?, allowUnsigned: Bool, allowedSizes: [String] = [], presets: [String] = [],
        maxAge: Int? = nil, errorMaxAge: Int? = nil, idleTimeout: Int? = nil, writeTimeout: Int? = nil, drainTimeout: Int? = nil,
        sourceDiskLimit: Int? = nil, resultDiskLimit: Int? = nil
    ) throws {
        guard (maxAge ?? 0) >= 0 else { throw ValidationError("max-age \(maxAge ?? 0): expected 0 or more seconds") }
        guard (errorMaxAge ?? 0) >= 0 else { throw ValidationError("error max-age \(errorMaxAge ?? 0): expected 0 or more seconds") }
        for (name, value) in [("idle timeout", idleTimeout), ("write timeout", writeTimeout), ("drain timeout", drainTimeout)] {
            guard (value ?? 1) > 0 else { throw ValidationError("\(name) \(value ?? 0): expected 1 or more seconds") }
        }
        for (name, value) in [("source disk limit", sourceDiskLimit), ("result disk limit", resultDiskLimit)] {
            guard (1...(1 << 30)).contains(value ?? 1) else { throw ValidationError("\(name) \(value ?? 0): expected 1 or more MiB") }
        }
        self.idleTimeout = .seconds(idleTimeout ?? 30)
        self.writeTimeout = .seconds(writeTimeout ?? 120)
        self.drainTimeout = .seconds(drainTimeout ?? 30)
        guard let colon = bind.lastIndex(of: ":"), let port = Int(bind[bind.index(after: colon)...]), (0...65_535).contains(port) else {
            throw ValidationError("bind address \(bind): expected HOST:PORT")
        }
        host = String(bind[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        self.port = port
        var networks: [IPNetwork] = []
        for text in allowedNetworks {
            guard let network = IPNetwork(text) else { throw ValidationError("allowed source network \(text): expected ADDRESS/LENGTH") }
            networks.append(network)
        }
        var signing: URLSigning?
        switch (keys, salts) {
        case (nil, nil): signing = nil
        case (let keys?, let salts?):
            do {
                signing = try URLSigning(hexKeys: keys, hexSalts: salts)
            } catch {
                throw ValidationError("IMAGO_KEY/IMAGO_SALT: \(error)")
            }
        default: throw ValidationError("IMAGO_KEY and IMAGO_SALT must be set together")
        }
        var sizes: Set<ImageSize> = []
        for text in allowedSizes {
            let sides = text.lowercased().split(separator: "x").map { Int($0) }
            guard sides.count == 2, let width = sides[0], let height = sides[1], width >= 0, height >= 0 else {
                throw ValidationError("allowed size \(text): expected WIDTHxHEIGHT")
            }
            sizes.insert(ImageSize(width: width, height: height))
        }
        var presetOptions: [String: [Substring]] = [:]
        for text in presets {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { throw ValidationError("preset \(text): expected NAME=OPTIONS") }
            let segments = text[text.index(after: equals)...].split(separator: "/")
            do {
                _ = try ProcessingOptions(segments: segments)
            } catch {
                throw ValidationError("preset \(text): \(error)")
            }
            presetOptions[String(text[..<equals])] = segments
        }
        configuration = ImageService.Configuration(
            signing: signing,
            allowsUnsigned: allowUnsigned,
            allowedSizes: sizes,
            sourcePolicy: SourcePolicy(allowedPrefixes: allowedSources, allowedNetworks: networks),
            presets: presetOptions,
            cacheFolder: cache,
            sourceDiskLimit: (sourceDiskLimit ?? 1024) << 20,
            resultDiskLimit: (resultDiskLimit ?? 1024) << 20,
            maxAge: maxAge ?? 86_400,
            errorMaxAge: errorMaxAge ?? 10
        )
    }
}
