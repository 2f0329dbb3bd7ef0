import Foundation
import Imago
import Logging
import Testing

@testable import ImagoServer

@Suite("imago serve's settings: one table for flags, variables, --help and docs/OPERATING.md; every field settable; bad values named")
struct ServeConfigurationTests {
    /// A value for each setting that differs from its default.
    static let samples: [String: String] = [
        "bind": "0.0.0.0:9000", "cache": "/tmp/elsewhere", "allowed-sources": "https://images.example.com/",
        "allow-source-network": "10.1.0.0/16", "allow-unsigned": "true", "allowed-size": "256x0", "preset": "thumb=w:64/h:64",
        "max-age": "60", "error-max-age": "2", "concurrency": "7", "queue-length": "9", "queue-timeout": "4", "source-timeout": "12",
        "max-source-size": "3", "max-pixels": "20", "max-frames": "50", "result-memory": "64", "result-lifetime": "600",
        "result-disk-limit": "5", "source-disk-limit": "6", "keep-every-source": "yes", "decode-memory": "128", "idle-timeout": "11",
        "write-timeout": "300", "drain-timeout": "13", "log-level": "debug", "log-format": "json", "demo": "1",
        "only-presets": "1", "allow-source-limits": "yes", "quality": "70", "format-quality": "webp=60", "max-result-dimension": "4000",
        "watermark-path": "/tmp/watermark.png", "watermark-url": "https://images.example.com/mark.png", "watermark-opacity": "0.5",
        "thumbor-key": "MY_SECURE_KEY", "thumbor-unsafe": "1", "thumbor-prefix": "t", "thumbor-host": "thumbor.example",
        "thumbor-source-base": "https://origin.example/images/", "local-root": "/tmp", "source-base": "https://media.example/",
        "source-header": "https://media.example/=Authorization: Bearer token", "source-headers-file": sourceHeadersFile, "s3": "1",
        "s3-endpoint": "http://127.0.0.1:9000", "s3-path-style": "1", "admin-bind": "127.0.0.1:9090", "metrics-bind": "127.0.0.1:9091",
        "forward-header": "Accept-Language", "result-store": "s3://results/imago/", "result-store-timeout": "9",
    ]
    /// The file the `source-headers-file` sample names, written by the tests that read it.
    static let sourceHeadersFile = NSTemporaryDirectory() + "imago-sample-source-headers-\(getpid())"

    @Test("every setting has a flag and an IMAGO_ variable of its own, and every field of the service's configuration is set by one")
    func coverage() throws {
        let settings = ServeConfiguration.settings
        try Data("# the operator's token\nhttps://media.example/=Cookie: session=1\n".utf8).write(to: URL(fileURLWithPath: Self.sourceHeadersFile))
        #expect(Set(settings.map(\.flag)).count == settings.count)
        #expect(Set(settings.map(\.variable)).count == settings.count)
        #expect(settings.allSatisfy { $0.variable.hasPrefix("IMAGO_") })
        #expect(Set(Self.samples.keys) == Set(settings.map(\.flag)), "a sample for each setting")

        // Each sample, given as its variable, changes the configuration; together they change every field.
        let defaults = ServeConfiguration()
        var changed: Set<String> = []
        for setting in settings {
            let value = try #require(Self.samples[setting.flag])
            let configured = try ServeConfiguration(flags: [:], environment: [setting.variable: value])
            let fields = Self.fields(of: configured).filter { Self.fields(of: defaults)[$0.key] != $0.value }
            #expect(!fields.isEmpty, "\(setting.variable)=\(value) changed nothing")
            changed.formUnion(fields.keys)
        }
        let signed = try ServeConfiguration(flags: [:], environment: ["IMAGO_KEY": "0a0b", "IMAGO_SALT": "0c0d"])
        #expect(signed.service.signing != nil)
        changed.insert("service.signing")
        #expect(try ServeConfiguration(flags: [:], environment: ["IMAGO_ADMIN_TOKEN": "t"]).adminToken == "t")
        changed.insert("adminToken")
        // The demo's site is made at start from its generated gallery, when `demo` (set above) is on.
        changed.insert("service.demo")
        let all = Set(Self.fields(of: defaults).keys)
        #expect(all.subtracting(changed).isEmpty, "fields no setting reaches: \(all.subtracting(changed).sorted())")
    }

    /// Each stored property's value, as text, by path (`service.maxAge`).
    static func fields(of configuration: ServeConfiguration) -> [String: String] {
        var fields: [String: String] = [:]
        for child in Mirror(reflecting: configuration).children {
            guard let label = child.label else { continue }
            if label == "service" {
                for field in Mirror(reflecting: child.value).children {
                    fields["service." + (field.label ?? "")] = String(reflecting: field.value)
                }
            } else {
                fields[label] = String(reflecting: child.value)
            }
        }
        return fields
    }

    @Test("flags: --name value, --name=value, switches, repeats; a flag wins over its variable; lists in variables")
    func flagsAndVariables() throws {
        let flags = try ServeConfiguration.flags(from: [
            "--bind", "127.0.0.1:0", "--max-age=30", "--allow-unsigned", "--allowed-sources", "http://a/", "--allowed-sources=http://b/",
        ])
        #expect(flags["bind"] == ["127.0.0.1:0"] && flags["max-age"] == ["30"] && flags["allow-unsigned"] == ["true"])
        let configuration = try ServeConfiguration(
            flags: flags,
            environment: [
                "IMAGO_MAX_AGE": "99", "IMAGO_ERROR_MAX_AGE": "3", "IMAGO_ALLOWED_SIZES": "64x64, 128x0", "IMAGO_PRESETS": "a=w:1,b=h:2",
            ])
        #expect(configuration.bind == "127.0.0.1:0")
        #expect(configuration.service.maxAge == 30, "the flag wins")
        #expect(configuration.service.errorMaxAge == 3)
        #expect(configuration.service.allowsUnsigned)
        #expect(configuration.service.sourcePolicy.allowedPrefixes == ["http://a/", "http://b/"])
        #expect(configuration.service.allowedSizes == [ImageSize(width: 64, height: 64), ImageSize(width: 128, height: 0)])
        #expect(Set(configuration.service.presets.definitions.keys) == ["a", "b"])
        #expect(try configuration.address == ("127.0.0.1", 0))

        for (arguments, message) in [
            (["--bogus"], "unknown option --bogus"), (["--max-age"], "--max-age needs a value"), (["serve"], "unexpected argument serve"),
        ] {
            #expect(throws: ConfigurationError.self) { _ = try ServeConfiguration.flags(from: arguments) }
            do { _ = try ServeConfiguration.flags(from: arguments) } catch { #expect(error.description.hasPrefix(message), "\(error)") }
        }
    }

    @Test("a bad value is refused at start, naming where it came from and what was expected")
    func badValues() {
        let cases: [([String: [String]], [String: String], String)] = [
            (["max-age": ["soon"]], [:], "--max-age soon: expected a whole number"),
            ([:], ["IMAGO_QUEUE_TIMEOUT": "1.5"], "IMAGO_QUEUE_TIMEOUT 1.5: expected a whole number of seconds"),
            ([:], ["IMAGO_ALLOWED_SOURCE_NETWORKS": "10.0.0.300/8"], "IMAGO_ALLOWED_SOURCE_NETWORKS 10.0.0.300/8: expected ADDRESS/LENGTH"),
            ([:], ["IMAGO_LOG_FORMAT": "xml"], "IMAGO_LOG_FORMAT xml: expected one of text, json, logfmt"),
            ([:], ["IMAGO_DEMO": "maybe"], "IMAGO_DEMO maybe: expected 1, true, yes, 0, false or no"),
            (["preset": ["thumb=w:x"]], [:], "--preset thumb=w:x: "),
            ([:], ["IMAGO_MAX_SOURCE_SIZE": "99999999999999999"], "IMAGO_MAX_SOURCE_SIZE 99999999999999999: too large"),
            ([:], ["IMAGO_KEY": "0a"], "IMAGO_KEY and IMAGO_SALT must be set together"),
        ]
        for (flags, environment, message) in cases {
            do {
                _ = try ServeConfiguration(flags: flags, environment: environment)
                Issue.record("\(flags) \(environment) was accepted")
            } catch {
                #expect(error.description.hasPrefix(message), "\(error)")
            }
        }
    }

    @Test("validate(): the defaults pass; out-of-bounds values and timeouts that cannot work are refused")
    func validation() throws {
        try ServeConfiguration().validate()
        let refused: [(String, String, String)] = [
            ("IMAGO_BIND", "localhost", "bind address localhost: expected HOST:PORT"),
            ("IMAGO_CONCURRENCY", "0", "concurrency 0: expected 1 or more"),
            ("IMAGO_MAX_AGE", "-1", "max-age -1: expected 0 or more seconds"),
            ("IMAGO_SOURCE_DISK_LIMIT", "0", "source disk limit 0 bytes: expected 1 MiB or more"),
            ("IMAGO_DRAIN_TIMEOUT", "0", "drain timeout 0.0 seconds: expected 1 or more seconds"),
            ("IMAGO_WRITE_TIMEOUT", "40", "write timeout 40.0 seconds: must exceed the queue timeout"),
        ]
        for (variable, value, message) in refused {
            let configuration = try ServeConfiguration(flags: [:], environment: [variable: value])
            #expect(throws: ConfigurationError.self, "\(variable)=\(value)") { try configuration.validate() }
            do { try configuration.validate() } catch { #expect(error.description.hasPrefix(message), "\(error)") }
        }
    }

    @Test("a service is not built from a configuration that cannot work")
    func serviceValidates() {
        let error = #expect(throws: ConfigurationError.self) { _ = try ImageService(configuration: .init(maximumConcurrentTransformations: 0)) }
        #expect(error?.description == "concurrency 0: expected 1 or more")
    }

    @Test("imago serve --help lists every flag and variable, with its default")
    func help() async throws {
        let imago = try ChildProcess("imago", arguments: ["serve", "--help"])
        let (help, status) = await imago.allOutput()
        #expect(status == .exited(0))
        // ArgumentParser wraps lines: compare words.
        let words = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for setting in ServeConfiguration.settings {
            #expect(words.contains(setting.isSwitch ? "--\(setting.flag)" : "--\(setting.flag) \(setting.valueName)"), "\(setting.flag)")
            #expect(words.contains("(\(setting.variable)"), "\(setting.variable)")
            let defaultText = setting.defaultText(ServeConfiguration()).split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(words.contains("default: \(defaultText)"), "\(setting.flag)'s default")
        }
        #expect(words.contains("IMAGO_KEY, IMAGO_SALT"))
    }

    @Test("docs/OPERATING.md's settings table is the one the code makes (IMAGO_UPDATE_DOCS=1 rewrites it)")
    func documentedTable() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../docs/OPERATING.md").standardized
        let text = try String(contentsOf: page, encoding: .utf8)
        let begin = "<!-- settings:begin -->\n"
        let end = "<!-- settings:end -->"
        let start = try #require(text.range(of: begin))
        let stop = try #require(text.range(of: end))
        let expected = ServeConfiguration.settingsTable + "\n"
        if ProcessInfo.processInfo.environment["IMAGO_UPDATE_DOCS"] == "1" {
            try (text[..<start.upperBound] + expected + text[stop.lowerBound...]).write(to: page, atomically: true, encoding: .utf8)
            return
        }
        #expect(
            String(text[start.upperBound..<stop.lowerBound]) == expected, "docs/OPERATING.md's table differs; run the tests with IMAGO_UPDATE_DOCS=1")
    }
}
