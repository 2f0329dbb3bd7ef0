import Foundation
import ImagoCaching

extension ServeConfiguration {
    /// The thumbor dialect's settings, made when the first of them is given.
    var thumbor: ThumborDialect {
        get { service.thumbor ?? ThumborDialect() }
        set { service.thumbor = newValue }
    }

    /// The settings of thumbor URLs: on only with a key or unsafe URLs.
    static let thumborSettings: [Setting] = [
        Setting(
            flag: "thumbor-key", variable: "IMAGO_THUMBOR_KEY", valueName: "KEY",
            summary: "thumbor's SECURITY_KEY: serve thumbor URLs signed with it (HMAC-SHA1)", isRepeatable: false, listSeparator: ",",
            defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in
                guard let key = values.last, !key.isEmpty else { throw ConfigurationError("expected a key") }
                configuration.thumbor.signing = ThumborSigning(key: key)
            }
        ),
        switchSetting("thumbor-unsafe", "Serve unsigned thumbor URLs (/unsafe/...)", \.thumbor.allowsUnsafe),
        Setting(
            flag: "thumbor-prefix", variable: "IMAGO_THUMBOR_PREFIX", valueName: "SEGMENT",
            summary: "The first path segment of thumbor URLs beside imgproxy's (empty: none; without imgproxy URLs they are at the root)",
            isRepeatable: false, listSeparator: ",", defaultText: { _ in "thumbor" },
            apply: { values, configuration throws(ConfigurationError) in
                let segment = values.last ?? ""
                guard !segment.contains("/") else { throw ConfigurationError("expected one path segment, without slashes") }
                configuration.thumbor.pathPrefix = segment.isEmpty ? nil : segment
            }
        ),
        Setting(
            flag: "thumbor-host", variable: "IMAGO_THUMBOR_HOSTS", valueName: "NAME",
            summary: "A host name whose every path is a thumbor URL", isRepeatable: true, listSeparator: ",", defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in
                configuration.thumbor.hosts = Set(values.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
            }
        ),
        Setting(
            flag: "thumbor-source-base", variable: "IMAGO_THUMBOR_SOURCE_BASE", valueName: "URL",
            summary: "What thumbor images that are not http(s) URLs are relative to", isRepeatable: false, listSeparator: ",",
            defaultText: { _ in "none: http:// is put before them" },
            apply: { values, configuration throws(ConfigurationError) in
                guard let text = values.last, let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                    throw ConfigurationError("expected an http or https URL")
                }
                configuration.thumbor.sourceBase = url
            }
        ),
    ]
}
