import ArgumentParser
import Foundation
import Hummingbird
import Imago
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
            (comma-separated) stand for the flags; IMAGO_KEY and IMAGO_SALT (hex, comma-separated pairs \
            for rotation) sign URLs. A flag wins over its variable.
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

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings = try ServeSettings(
            bind: bind ?? environment["IMAGO_BIND"] ?? "127.0.0.1:8080",
            cache: cache ?? environment["IMAGO_CACHE"] ?? Terminal.defaultCacheFolder + "/serve",
            allowedSources: allowedSources.isEmpty ? Self.list(environment["IMAGO_ALLOWED_SOURCES"]) : allowedSources,
            allowedNetworks: allowSourceNetworks.isEmpty ? Self.list(environment["IMAGO_ALLOWED_SOURCE_NETWORKS"]) : allowSourceNetworks,
            keys: environment["IMAGO_KEY"],
            salts: environment["IMAGO_SALT"],
            allowUnsigned: allowUnsigned,
            allowedSizes: allowedSizes.isEmpty ? Self.list(environment["IMAGO_ALLOWED_SIZES"]) : allowedSizes,
            presets: presets.isEmpty ? Self.list(environment["IMAGO_PRESETS"], separator: ";") : presets
        )
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
        let app = ImageServer.application(service: service, host: settings.host, port: settings.port, logger: logger)
        // Returns once SIGTERM or SIGINT has stopped the server and the
        // requests in flight have been answered.
        try await app.runService()
        service.close()
        logger.info("stopped; the cache's index snapshot is saved")
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
    var configuration: ImageService.Configuration

    init(
        bind: String, cache: String, allowedSources: [String], allowedNetworks: [String],
        keys: String?, salts: String?, allowUnsigned: Bool, allowedSizes: [String] = [], presets: [String] = []
    ) throws {
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
            cacheFolder: cache
        )
    }
}
