import Foundation
import Imago
import ImagoCaching
import Logging

extension ServeConfiguration {
    /// One setting: its flag, its `IMAGO_*` variable, what it takes and
    /// does, how its default reads, and how a value is applied.
    public struct Setting: Sendable {
        /// The flag without its dashes (`max-age`).
        public let flag: String
        public let variable: String
        /// What a value looks like (`SECONDS`), empty for a switch.
        public let valueName: String
        public let summary: String
        /// A switch takes no value on the command line (`1`, `true` or `yes` in the environment).
        public var isSwitch: Bool { valueName.isEmpty }
        /// Repeatable on the command line; a list in the environment.
        public let isRepeatable: Bool
        let listSeparator: Character
        /// The default, as the help and docs/OPERATING.md print it.
        public let defaultText: @Sendable (ServeConfiguration) -> String
        let apply: @Sendable ([String], inout ServeConfiguration) throws(ConfigurationError) -> Void

        /// What `--help` says of it.
        public var help: String {
            let list = isRepeatable ? "; repeatable, or a list separated by '\(listSeparator)' in \(variable)" : ""
            return "\(summary) (\(variable)\(list); default: \(defaultText(ServeConfiguration())))."
        }
    }

    /// Every setting of `imago serve`, in the order `--help` lists them.
    /// The signing keys are variables only (IMAGO_KEY, IMAGO_SALT), so
    /// that they never show in `ps`.
    public static let settings: [Setting] =
        [
            text("bind", "HOST:PORT", "Address and port to listen on", \.bind),
            Setting(
                flag: "cache", variable: "IMAGO_CACHE", valueName: "FOLDER",
                summary: "The folder caching sources (sources/) and answers (results/)", isRepeatable: false, listSeparator: ",",
                defaultText: { _ in "$XDG_CACHE_HOME/imago/serve, else ~/.cache/imago/serve" },
                apply: { values, configuration throws(ConfigurationError) in configuration.service.cacheFolder = values.last }
            ),
            list("allowed-sources", "URL", "A URL prefix sources must start with", \.service.sourcePolicy.allowedPrefixes, default: "any") { $0 },
            list(
                "allow-source-network", "CIDR", variable: "IMAGO_ALLOWED_SOURCE_NETWORKS", "A network opened although loopback or private",
                \.service.sourcePolicy.allowedNetworks, default: "none"
            ) { text throws(ConfigurationError) in
                guard let network = IPNetwork(text) else { throw ConfigurationError("expected ADDRESS/LENGTH") }
                return network
            },
            switchSetting("allow-unsigned", "Serve unsigned URLs (signature segment 'unsafe')", \.service.allowsUnsigned),
            Setting(
                flag: "allowed-size", variable: "IMAGO_ALLOWED_SIZES", valueName: "WIDTHxHEIGHT",
                summary: "A box unsigned URLs may ask for without --allow-unsigned (0 for a free side)", isRepeatable: true, listSeparator: ",",
                defaultText: { _ in "none" },
                apply: { values, configuration throws(ConfigurationError) in
                    configuration.service.allowedSizes = []
                    for text in values {
                        let sides = text.lowercased().split(separator: "x").map { Int($0) }
                        guard sides.count == 2, let width = sides[0], let height = sides[1], width >= 0, height >= 0 else {
                            throw ConfigurationError("expected WIDTHxHEIGHT")
                        }
                        configuration.service.allowedSizes.insert(ImageSize(width: width, height: height))
                    }
                }
            ),
            seconds("max-age", "Cache-Control max-age of images, at most the source's remaining freshness", \.service.maxAge),
            seconds("error-max-age", "Cache-Control max-age of error answers", \.service.errorMaxAge),
            count(
                "concurrency", "Transformations (download, decode, process, encode) at once", \.service.maximumConcurrentTransformations,
                default: "the number of cores"),
            count("queue-length", "Requests waiting for a transformation turn; beyond them, 429", \.service.queueCapacity),
            duration("queue-timeout", "Seconds a request may wait for its turns before a 503", \.service.queueTimeout),
            duration("source-timeout", "Seconds a source's whole download may take", \.service.sourceTimeout),
            mebibytes("max-source-size", "MiB a source's body may have", \.service.maximumSourceSize),
            number(
                "max-pixels", "MEGAPIXELS", "Megapixels a source's header may declare", \.service.maximumPixelCount, scale: 1_000_000, default: nil),
            count("max-frames", "Frames an animated source may have", \.service.maximumFrameCount),
            mebibytes(
                "result-memory", "MiB of encoded answers kept in memory", \.service.resultCacheSize,
                default: "a fifth of the memory limit, at most 512"),
            duration("result-lifetime", "Seconds an answer is served before its source is asked again", \.service.resultLifetime),
            mebibytes("result-disk-limit", "MiB the cached answers may take on disk", \.service.resultDiskLimit),
            mebibytes("source-disk-limit", "MiB the cached sources may take on disk", \.service.sourceDiskLimit),
            Setting(
                flag: "keep-every-source", variable: "IMAGO_KEEP_EVERY_SOURCE", valueName: "",
                summary: "Keep every fetched source on disk, not only those fetched a second time", isRepeatable: false, listSeparator: ",",
                defaultText: { $0.service.sourceAdmission == .always ? "on" : "off" },
                apply: { values, configuration throws(ConfigurationError) in
                    configuration.service.sourceAdmission = try parseSwitch(values) ? .always : ImageService.Configuration().sourceAdmission
                }
            ),
            mebibytes(
                "decode-memory", "MiB of decoded pixels in flight; a decode that does not fit waits", \.service.decodeMemoryBudget,
                default: "a quarter of the memory limit"),
            duration("idle-timeout", "Seconds a connection may send no whole request part before it is closed", \.idleTimeout),
            duration(
                "write-timeout", "Seconds an answer may wait for a client that does not read; more than the queue and source timeouts", \.writeTimeout
            ),
            duration("drain-timeout", "Seconds the requests in flight get to finish after SIGTERM", \.drainTimeout),
            choice("log-level", "LEVEL", "How much is logged", \.logLevel, Logger.Level.allCases),
            choice("log-format", "FORMAT", "How log lines are written", \.logFormat, LogFormat.allCases),
            switchSetting("demo", "Also serve a generated gallery as the source, and pages of its thumbnails at /", \.demo),
            Setting(
                flag: "admin-bind", variable: "IMAGO_ADMIN_BIND", valueName: "HOST:PORT",
                summary: "Also listen here for POST /purge?source=URL and /metrics, with Authorization: Bearer IMAGO_ADMIN_TOKEN",
                isRepeatable: false, listSeparator: ",", defaultText: { _ in "none" },
                apply: { values, configuration throws(ConfigurationError) in configuration.adminBind = values.last }
            ),
            Setting(
                flag: "metrics-bind", variable: "IMAGO_METRICS_BIND", valueName: "HOST:PORT",
                summary: "Also listen here for /metrics alone; with this or --admin-bind, the public port has no /metrics",
                isRepeatable: false, listSeparator: ",", defaultText: { _ in "none" },
                apply: { values, configuration throws(ConfigurationError) in configuration.metricsBind = values.last }
            ),
        ] + originSettings + processingSettings + thumborSettings

    /// The settings as `--help` lists them: each flag, then what it does.
    public static var settingsHelp: String {
        settings.map { setting in
            let usage = setting.isSwitch ? "--\(setting.flag)" : "--\(setting.flag) \(setting.valueName)"
            return usage + "\n      " + setting.help
        }.joined(separator: "\n")
            + "\nIMAGO_KEY, IMAGO_SALT\n      Hex signing keys and salts, comma-separated pairs for rotation (variables only, so that they never show in ps)."
            + "\nIMAGO_ADMIN_TOKEN\n      The bearer token of the admin listener (a variable only)."
    }

    /// Command-line arguments (`--flag value`, `--flag=value`, `--switch`)
    /// as values by flag name, for ``init(flags:environment:)``.
    public static func flags(from arguments: [String]) throws(ConfigurationError) -> [String: [String]] {
        var flags: [String: [String]] = [:]
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument.hasPrefix("--") else { throw ConfigurationError("unexpected argument \(argument); see imago serve --help") }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            guard let setting = settings.first(where: { $0.flag == name }) else {
                throw ConfigurationError("unknown option --\(name); see imago serve --help")
            }
            let value: String
            if let equals = body.firstIndex(of: "=") {
                value = String(body[body.index(after: equals)...])
            } else if setting.isSwitch {
                value = "true"
            } else if let next = remaining.popFirst() {
                value = next
            } else {
                throw ConfigurationError("--\(name) needs a value: \(setting.valueName)")
            }
            flags[name, default: []].append(value)
        }
        return flags
    }

    /// The settings as a Markdown table, as docs/OPERATING.md prints it.
    public static var settingsTable: String {
        var lines = ["| Flag | Variable | Default | What it sets |", "| --- | --- | --- | --- |"]
        let defaults = ServeConfiguration()
        for setting in settings {
            let flag = setting.isSwitch ? "`--\(setting.flag)`" : "`--\(setting.flag) \(setting.valueName)`"
            lines.append("| \(flag) | `\(setting.variable)` | \(setting.defaultText(defaults)) | \(setting.summary) |")
        }
        lines.append("| | `IMAGO_KEY`, `IMAGO_SALT` | none | Hex signing keys and salts, comma-separated pairs for rotation (variables only) |")
        return lines.joined(separator: "\n")
    }

    // MARK: Kinds of setting

    static func variable(_ flag: String) -> String { "IMAGO_" + flag.uppercased().replacingOccurrences(of: "-", with: "_") }

    static func text(_ flag: String, _ valueName: String, _ summary: String, _ path: WritableKeyPath<ServeConfiguration, String> & Sendable)
        -> Setting
    {
        Setting(
            flag: flag, variable: variable(flag), valueName: valueName, summary: summary, isRepeatable: false, listSeparator: ",",
            defaultText: { $0[keyPath: path] },
            apply: { values, configuration throws(ConfigurationError) in configuration[keyPath: path] = values.last ?? "" }
        )
    }

    static func list<Element>(
        _ flag: String, _ valueName: String, variable name: String? = nil, _ summary: String,
        _ path: WritableKeyPath<ServeConfiguration, [Element]> & Sendable, default text: String,
        _ parseElement: @escaping @Sendable (String) throws(ConfigurationError) -> Element
    ) -> Setting {
        Setting(
            flag: flag, variable: name ?? variable(flag), valueName: valueName, summary: summary, isRepeatable: true, listSeparator: ",",
            defaultText: { _ in text },
            apply: { values, configuration throws(ConfigurationError) in
                var elements: [Element] = []
                for value in values { elements.append(try parseElement(value)) }
                configuration[keyPath: path] = elements
            }
        )
    }

    static func switchSetting(_ flag: String, _ summary: String, _ path: WritableKeyPath<ServeConfiguration, Bool> & Sendable) -> Setting {
        Setting(
            flag: flag, variable: variable(flag), valueName: "", summary: summary, isRepeatable: false, listSeparator: ",",
            defaultText: { $0[keyPath: path] ? "on" : "off" },
            apply: { values, configuration throws(ConfigurationError) in configuration[keyPath: path] = try parseSwitch(values) }
        )
    }

    static func count(
        _ flag: String, _ summary: String, _ path: WritableKeyPath<ServeConfiguration, Int> & Sendable, default text: String? = nil
    ) -> Setting {
        number(flag, "COUNT", summary, path, scale: 1, default: text)
    }

    /// Seconds into an `Int` field (a max-age).
    static func seconds(_ flag: String, _ summary: String, _ path: WritableKeyPath<ServeConfiguration, Int> & Sendable) -> Setting {
        number(flag, "SECONDS", summary, path, scale: 1, default: nil)
    }

    static func mebibytes(
        _ flag: String, _ summary: String, _ path: WritableKeyPath<ServeConfiguration, Int> & Sendable, default text: String? = nil
    ) -> Setting {
        number(flag, "MIB", summary, path, scale: 1 << 20, default: text)
    }

    static func number(
        _ flag: String, _ valueName: String, _ summary: String, _ path: WritableKeyPath<ServeConfiguration, Int> & Sendable, scale: Int,
        default text: String?
    ) -> Setting {
        Setting(
            flag: flag, variable: variable(flag), valueName: valueName, summary: summary, isRepeatable: false, listSeparator: ",",
            defaultText: { configuration in text ?? String(configuration[keyPath: path] / scale) },
            apply: { values, configuration throws(ConfigurationError) in
                configuration[keyPath: path] = try parseNumber(values, as: "a whole number", scale: scale)
            }
        )
    }

    static func duration(_ flag: String, _ summary: String, _ path: WritableKeyPath<ServeConfiguration, Duration> & Sendable) -> Setting {
        Setting(
            flag: flag, variable: variable(flag), valueName: "SECONDS", summary: summary, isRepeatable: false, listSeparator: ",",
            defaultText: { String($0[keyPath: path].components.seconds) },
            apply: { values, configuration throws(ConfigurationError) in
                configuration[keyPath: path] = .seconds(try parse(values, as: "a whole number of seconds") { Int($0) })
            }
        )
    }

    static func choice<Value: RawRepresentable<String> & Sendable>(
        _ flag: String, _ valueName: String, _ summary: String, _ path: WritableKeyPath<ServeConfiguration, Value> & Sendable, _ cases: [Value]
    ) -> Setting {
        let names = "one of " + cases.map(\.rawValue).joined(separator: ", ")
        return Setting(
            flag: flag, variable: variable(flag), valueName: valueName, summary: summary + " (\(names))", isRepeatable: false, listSeparator: ",",
            defaultText: { $0[keyPath: path].rawValue },
            apply: { values, configuration throws(ConfigurationError) in
                configuration[keyPath: path] = try parse(values, as: names) { Value(rawValue: $0.lowercased()) }
            }
        )
    }

    /// The last of `values`, parsed; an error saying what was expected.
    static func parse<Value>(_ values: [String], as expected: String, _ parse: (String) throws(ConfigurationError) -> Value?)
        throws(ConfigurationError) -> Value
    {
        guard let text = values.last?.trimmingCharacters(in: .whitespaces), let value = try parse(text) else {
            throw ConfigurationError("expected \(expected)")
        }
        return value
    }

    static func parseSwitch(_ values: [String]) throws(ConfigurationError) -> Bool {
        try parse(values, as: "1, true, yes, 0, false or no") { text in
            switch text.lowercased() {
            case "1", "true", "yes", "on": true
            case "0", "false", "no", "off": false
            default: nil
            }
        }
    }

    /// The last of `values` as a whole number times `scale`, refused where it would overflow.
    static func parseNumber(_ values: [String], as expected: String, scale: Int) throws(ConfigurationError) -> Int {
        let value = try parse(values, as: expected) { Int($0) }
        let (result, overflow) = value.multipliedReportingOverflow(by: scale)
        guard !overflow else { throw ConfigurationError("too large") }
        return result
    }
}
