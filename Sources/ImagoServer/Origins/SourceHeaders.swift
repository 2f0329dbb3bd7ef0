import Foundation
import HTTPTypes
import ImagoCaching

/// Fields the operator attaches to every http(s) source whose URL starts
/// with `prefix`: an `Authorization` token, a cookie, a `User-Agent`.
/// On a redirect to another origin, `Authorization` and `Cookie` are
/// dropped.
public struct SourceHeaders: Sendable, Equatable {
    public var prefix: String
    public var fields: HTTPFields

    /// `PREFIX=Name: value`, as `--source-header` takes it.
    public init(parsing text: String) throws(ConfigurationError) {
        guard let equals = text.firstIndex(of: "="), let colon = text[equals...].firstIndex(of: ":") else {
            throw ConfigurationError("expected PREFIX=Name: value")
        }
        let prefix = String(text[..<equals])
        let name = text[text.index(after: equals)..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard SourcePolicy.hasScheme(prefix), let fieldName = HTTPField.Name(name) else {
            throw ConfigurationError("expected PREFIX=Name: value, PREFIX a URL prefix and Name a field name")
        }
        guard !Self.refusedNames.contains(fieldName) else { throw ConfigurationError("\(name) is not set by the operator") }
        self.prefix = prefix
        self.fields = [fieldName: value]
    }

    public init(prefix: String, fields: HTTPFields) {
        self.prefix = prefix
        self.fields = fields
    }

    /// What the loader sets itself, or what would make the request another one.
    static let refusedNames: Set<HTTPField.Name> = [
        HTTPField.Name("Host")!, .connection, .contentLength, .transferEncoding, .te, .upgrade, .ifNoneMatch, .ifModifiedSince, .range, .ifRange,
    ]
}
