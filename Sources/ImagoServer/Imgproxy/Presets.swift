import Foundation
import ImagoCaching

/// Named lists of options, as imgproxy's `IMGPROXY_PRESETS` defines them:
/// `name=option/option`, used in URLs as `pr:name` (or, in presets-only
/// mode, as the first path segment). A preset named `default` applies to
/// every URL before its own options.
public struct Presets: Sendable {
    /// Each preset's options, by name.
    public var definitions: [String: [ProcessingOptions.Option]]

    public init() {
        definitions = [:]
    }

    /// Presets from `name=options` lines; blank lines and lines starting
    /// with `#` are skipped. Each preset's options are checked, so a typo is
    /// found at start, not on the first request that uses it.
    public init(lines: some Sequence<some StringProtocol>) throws(ConfigurationError) {
        definitions = [:]
        for line in lines {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, !text.hasPrefix("#") else { continue }
            let halves = text.split(separator: "=", omittingEmptySubsequences: false)
            guard halves.count == 2 else { throw ConfigurationError("preset \"\(text)\": expected NAME=OPTIONS") }
            let name = halves[0].trimmingCharacters(in: .whitespaces)
            let value = halves[1].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !value.isEmpty else { throw ConfigurationError("preset \"\(text)\": the name and the options may not be empty") }
            var options: [ProcessingOptions.Option] = []
            for segment in value.split(separator: "/") {
                guard let option = ProcessingOptions.Option(segment) else {
                    throw ConfigurationError("preset \"\(name)\": \"\(segment)\" is not an option (expected name:arguments)")
                }
                options.append(option)
            }
            definitions[name] = options
        }
        let parser = ProcessingOptions.Parser(presets: self)
        for name in definitions.keys.sorted() {
            do { _ = try parser.options(presetNames: [name]) } catch { throw ConfigurationError("preset \"\(name)\": \(error)") }
        }
    }
}
