import Foundation
import HTTPTypes
import ImagoCaching

extension ServeConfiguration {
    /// The object storage settings, made when the first of them is given.
    var objectStorage: ObjectStorage {
        get { service.objectStorage ?? ObjectStorage() }
        set { service.objectStorage = newValue }
    }

    /// Fields a client's request never passes on: hop-by-hop ones, and
    /// those that would make the source's answer another one.
    static let forwardRefused: Set<String> = [
        "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "trailer", "if-match", "if-unmodified-since",
        "accept-encoding", "content-type", "expect",
    ]

    /// Where sources come from besides public http(s) URLs: files, object
    /// storage, and the fields attached to an origin's requests.
    static let originSettings: [Setting] = [
        Setting(
            flag: "local-root", variable: "IMAGO_LOCAL_ROOT", valueName: "FOLDER",
            summary: "Serve local:///path sources from files under this folder, and nowhere else", isRepeatable: false, listSeparator: ",",
            defaultText: { _ in "none: local sources are refused" },
            apply: { values, configuration throws(ConfigurationError) in configuration.service.localRoot = values.last }
        ),
        Setting(
            flag: "source-base", variable: "IMAGO_SOURCE_BASE", valueName: "URL",
            summary: "What a source without a scheme is appended to (https://media.example/)", isRepeatable: false, listSeparator: ",",
            defaultText: { _ in "none: such sources are refused" },
            apply: { values, configuration throws(ConfigurationError) in
                guard let base = values.last, SourcePolicy.hasScheme(base) else { throw ConfigurationError("expected a URL with a scheme") }
                configuration.service.sourcePolicy.base = base
            }
        ),
        Setting(
            flag: "source-header", variable: "IMAGO_SOURCE_HEADERS", valueName: "'PREFIX=Name: value'",
            summary: "A field sent with every http(s) source under PREFIX (an Authorization token, a cookie, a User-Agent)",
            isRepeatable: true, listSeparator: "\n", defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in
                for value in values { configuration.service.sourceHeaders.append(try SourceHeaders(parsing: value)) }
            }
        ),
        Setting(
            flag: "source-headers-file", variable: "IMAGO_SOURCE_HEADERS_FILE", valueName: "FILE",
            summary: "Fields as --source-header takes them, one a line (# starts a comment), kept out of ps", isRepeatable: false,
            listSeparator: ",", defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in
                guard let path = values.last, let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw ConfigurationError("cannot read the file")
                }
                for line in text.split(whereSeparator: \.isNewline) {
                    let entry = line.trimmingCharacters(in: .whitespaces)
                    guard !entry.isEmpty, !entry.hasPrefix("#") else { continue }
                    configuration.service.sourceHeaders.append(try SourceHeaders(parsing: entry))
                }
            }
        ),
        Setting(
            flag: "forward-header", variable: "IMAGO_FORWARD_HEADERS", valueName: "NAME",
            summary: "A client's request field passed on to sources (Cookie and Authorization only if named; never Host or hop-by-hop "
                + "fields); answers then vary on it, and such sources skip the source cache",
            isRepeatable: true, listSeparator: ",", defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in
                configuration.service.forwardedHeaders = []
                for value in values {
                    guard let name = HTTPField.Name(value) else { throw ConfigurationError("\(value) is not a field name") }
                    guard !SourceHeaders.refusedNames.contains(name), !ServeConfiguration.forwardRefused.contains(name.canonicalName.lowercased())
                    else {
                        throw ConfigurationError("\(value) is never forwarded")
                    }
                    configuration.service.forwardedHeaders.append(name)
                }
            }
        ),
        Setting(
            flag: "s3", variable: "IMAGO_S3", valueName: "",
            summary: "Serve s3://bucket/key sources, signed with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN in AWS_REGION",
            isRepeatable: false, listSeparator: ",", defaultText: { $0.service.objectStorage == nil ? "off" : "on" },
            apply: { values, configuration throws(ConfigurationError) in
                configuration.service.objectStorage = try parseSwitch(values) ? configuration.objectStorage : nil
            }
        ),
        Setting(
            flag: "s3-endpoint", variable: "IMAGO_S3_ENDPOINT", valueName: "URL",
            summary: "An S3-compatible endpoint, trusted (no address check); implies --s3", isRepeatable: false, listSeparator: ",",
            defaultText: { _ in "AWS's, https://s3.REGION.amazonaws.com" },
            apply: { values, configuration throws(ConfigurationError) in
                guard let text = values.last, let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                    throw ConfigurationError("expected an http(s) URL")
                }
                configuration.objectStorage.endpoint = url
            }
        ),
        Setting(
            flag: "result-store", variable: "IMAGO_RESULT_STORE", valueName: "s3://BUCKET/PREFIX",
            summary: "Keep answers in object storage too, shared by every instance (the --s3 settings and keys; implies --s3)",
            isRepeatable: false, listSeparator: ",", defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in
                guard let text = values.last, let url = URL(string: text), url.scheme == "s3", !(url.host ?? "").isEmpty else {
                    throw ConfigurationError("expected s3://bucket/prefix")
                }
                configuration.service.resultStore = url
                configuration.objectStorage = configuration.objectStorage
            }
        ),
        duration(
            "result-store-timeout", "Seconds one request to the result store may take before the store is skipped for a while",
            \.service.resultStoreTimeout),
        Setting(
            flag: "s3-path-style", variable: "IMAGO_S3_PATH_STYLE", valueName: "",
            summary: "Address objects as ENDPOINT/BUCKET/KEY, not BUCKET.ENDPOINT/KEY; implies --s3", isRepeatable: false, listSeparator: ",",
            defaultText: { ($0.service.objectStorage?.usesPathStyle ?? false) ? "on" : "off" },
            apply: { values, configuration throws(ConfigurationError) in configuration.objectStorage.usesPathStyle = try parseSwitch(values) }
        ),
    ]
}
