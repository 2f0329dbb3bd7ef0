import Foundation
import HTTPTypes
import Imago
import ImagoCaching

/// Fields the operator attaches to every http(s) source under a prefix:
/// an `Authorization` token, a cookie, a `User-Agent`. They go to the
/// URLs under the prefix only, checked again at every redirect hop.
public struct SourceHeaders: Sendable, Equatable {
    /// The fields and the URLs they go to.
    public var scoped: ScopedFields

    /// `PREFIX=Name: value`, as `--source-header` takes it.
    public init(parsing text: String) throws(ConfigurationError) {
        guard let equals = text.firstIndex(of: "="), let colon = text[equals...].firstIndex(of: ":") else {
            throw ConfigurationError("expected PREFIX=Name: value")
        }
        let prefix = String(text[..<equals])
        let name = text[text.index(after: equals)..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard let scope = URLPrefix(prefix), let fieldName = HTTPField.Name(name) else {
            throw ConfigurationError("expected PREFIX=Name: value, PREFIX an http(s) URL with a host and Name a field name")
        }
        guard !Self.refusedNames.contains(fieldName) else { throw ConfigurationError("\(name) is not set by the operator") }
        scoped = ScopedFields(prefix: scope, fields: [fieldName: value])
    }

    /// What the loader sets itself, or what would make the request another one.
    static let refusedNames: Set<HTTPField.Name> = [
        HTTPField.Name("Host")!, .connection, .contentLength, .transferEncoding, .te, .upgrade, .ifNoneMatch, .ifModifiedSince, .range, .ifRange,
    ]
}
