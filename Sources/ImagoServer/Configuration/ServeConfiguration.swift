import Foundation
import Imago
import ImagoCaching
import Logging

/// Everything `imago serve` starts with: the service's configuration and
/// the server's own settings (address, timeouts, logs). Read from flags
/// and `IMAGO_*` environment variables by ``init(flags:environment:)``,
/// whose table of ``settings`` is the one source of `imago serve --help`
/// and of the settings table in docs/OPERATING.md; checked by ``validate()``.
public struct ServeConfiguration: Sendable {
    /// How log lines are written.
    public enum LogFormat: String, Sendable, CaseIterable {
        /// `date level label: message key=value …`, for people.
        case text
        /// One JSON object a line.
        case json
        /// `key=value` pairs, quoted where needed.
        case logfmt
    }

    public var service = ImageService.Configuration()
    /// `HOST:PORT` to listen on (port 0: any free port).
    public var bind = "127.0.0.1:8080"
    /// A connection that sends no whole request part for this long is closed.
    public var idleTimeout: Duration = .seconds(30)
    /// A connection whose answer has not been taken for this long is closed.
    public var writeTimeout: Duration = .seconds(120)
    /// How long the requests in flight get to finish after SIGTERM.
    public var drainTimeout: Duration = .seconds(30)
    public var logLevel = Logger.Level.info
    public var logFormat = LogFormat.text
    /// Serve a generated gallery and pages of its thumbnails.
    public var demo = false
    /// `HOST:PORT` of the admin listener (`POST /purge`, `/metrics`); nil for none.
    public var adminBind: String?
    /// `HOST:PORT` of a listener serving `/metrics` alone; nil for none.
    public var metricsBind: String?
    /// The bearer token the admin listener asks for (`IMAGO_ADMIN_TOKEN` only).
    public var adminToken: String?

    /// The defaults: each field's default is given here or in
    /// ``ImageService/Configuration``'s, nowhere else.
    public init() {
        service.cacheFolder = Self.defaultCacheFolder
    }

    /// `$XDG_CACHE_HOME/imago/serve`, else `~/.cache/imago/serve`.
    static var defaultCacheFolder: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.cache"
        return base + "/imago/serve"
    }

    /// The host and port of ``bind``.
    public var address: (host: String, port: Int) {
        get throws(ConfigurationError) { try Self.address(bind) }
    }

    /// The host and port of a `HOST:PORT` address.
    public static func address(_ text: String) throws(ConfigurationError) -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port),
            colon != text.startIndex
        else {
            throw ConfigurationError("bind address \(text): expected HOST:PORT")
        }
        return (String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
    }

    /// Reads every setting from `flags` (values by flag name, as given on
    /// the command line) or else from `environment` (`IMAGO_*`), over the
    /// defaults. A flag wins over its variable. Throws on the first value
    /// that does not parse, naming where it came from.
    public init(flags: [String: [String]], environment: [String: String]) throws(ConfigurationError) {
        self.init()
        for setting in Self.settings {
            let values: [String]
            let origin: String
            if let given = flags[setting.flag], !given.isEmpty {
                (values, origin) = (given, "--" + setting.flag)
            } else if let text = environment[setting.variable] {
                values =
                    setting.isRepeatable
                    ? text.split(separator: setting.listSeparator).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } : [text]
                origin = setting.variable
            } else {
                continue
            }
            do {
                try setting.apply(values, &self)
            } catch {
                throw ConfigurationError("\(origin) \(values.joined(separator: ",")): \(error.description)")
            }
        }
        if let storage = service.objectStorage {
            // Credentials and region from AWS's own variables, as its tools read them.
            let aws = ObjectStorage.fromEnvironment(environment, endpoint: storage.endpoint, usesPathStyle: storage.usesPathStyle)
            service.objectStorage = aws
        }
        adminToken = environment["IMAGO_ADMIN_TOKEN"]
        let keys = environment["IMAGO_KEY"]
        let salts = environment["IMAGO_SALT"]
        switch (keys, salts) {
        case (nil, nil): break
        case (let keys?, let salts?):
            do {
                service.signing = try URLSigning(hexKeys: keys, hexSalts: salts)
            } catch {
                throw ConfigurationError("IMAGO_KEY/IMAGO_SALT: \(error)")
            }
        default: throw ConfigurationError("IMAGO_KEY and IMAGO_SALT must be set together")
        }
    }

    /// Checks the settings together: the service's own checks, the
    /// address, the timeouts. The first problem found is thrown.
    public func validate() throws(ConfigurationError) {
        try service.validate()
        _ = try address
        for text in [adminBind, metricsBind].compactMap({ $0 }) { _ = try Self.address(text) }
        if adminBind != nil, adminToken?.isEmpty ?? true {
            throw ConfigurationError("the admin listener (--admin-bind) needs IMAGO_ADMIN_TOKEN")
        }
        for (name, value) in [("idle timeout", idleTimeout), ("write timeout", writeTimeout), ("drain timeout", drainTimeout)] where value <= .zero {
            throw ConfigurationError("\(name) \(value): expected 1 or more seconds")
        }
        // No write completes while a request waits for its turn and its source.
        guard writeTimeout > service.queueTimeout + service.sourceTimeout else {
            throw ConfigurationError(
                "write timeout \(writeTimeout): must exceed the queue timeout (\(service.queueTimeout)) plus the source timeout (\(service.sourceTimeout))"
            )
        }
    }
}
