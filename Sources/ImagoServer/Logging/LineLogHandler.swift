import Foundation
import Imago
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes each log event as one line, in one of the formats log shippers
/// read (``ServeConfiguration/LogFormat``): the time in UTC with
/// milliseconds, the level, the logger's label, the message, and the
/// metadata, keys sorted.
///
/// ```swift
/// LoggingSystem.bootstrap { LineLogHandler(label: $0, format: .json) }
/// ```
public struct LineLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    let label: String
    let format: ServeConfiguration.LogFormat
    let write: @Sendable (String) -> Void

    /// A handler writing to standard output, or to `write` (tests).
    public init(
        label: String, format: ServeConfiguration.LogFormat, level: Logger.Level = .info,
        write: @escaping @Sendable (String) -> Void = LineLogHandler.standardOutput
    ) {
        self.label = label
        self.format = format
        logLevel = level
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { $1 } }
        if let given = event.metadata { fields.merge(given) { $1 } }
        write(line(time: Date(), level: event.level, message: event.message.description, fields: fields))
    }

    /// The line for one event, newline included.
    func line(time: Date, level: Logger.Level, message: String, fields: Logger.Metadata) -> String {
        let stamp = HTTPDate.iso8601(time)
        let sorted = fields.map { ($0.key, Self.text($0.value)) }.sorted { $0.0 < $1.0 }
        switch format {
        case .text:
            let pairs = sorted.map { " \($0)=\($1)" }.joined()
            return "\(stamp) \(level) \(label): \(message)\(pairs)\n"
        case .logfmt:
            let pairs = sorted.map { " \(Self.logfmtKey($0))=\(Self.logfmtValue($1))" }.joined()
            return "time=\(stamp) level=\(level) logger=\(Self.logfmtValue(label)) msg=\(Self.logfmtValue(message))\(pairs)\n"
        case .json:
            let base = [("time", stamp), ("level", level.rawValue), ("logger", label), ("message", message)]
            let members = (base + sorted).map { "\(Self.jsonString($0)):\(Self.jsonString($1))" }
            return "{" + members.joined(separator: ",") + "}\n"
        }
    }

    /// Writes a line to standard output in one call, so that lines from
    /// several threads never interleave.
    public static let standardOutput: @Sendable (String) -> Void = { line in
        var line = line
        line.withUTF8 { bytes in
            var done = 0
            while done < bytes.count, let base = bytes.baseAddress {
                let written = Glibc.write(STDOUT_FILENO, base + done, bytes.count - done)
                if written > 0 {
                    done += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    // MARK: Formatting

    static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): "[" + values.map(text).joined(separator: ", ") + "]"
        case .dictionary(let values): "[" + values.map { "\($0.key): \(text($0.value))" }.sorted().joined(separator: ", ") + "]"
        }
    }

    /// A logfmt key: its characters other than letters, digits, `_`, `.`, `-` made `_`.
    static func logfmtKey(_ key: String) -> String {
        String(
            String.UnicodeScalarView(
                key.unicodeScalars.map { scalar in
                    scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_.-".unicodeScalars.contains(scalar) ? scalar : "_"
                }))
    }

    /// A logfmt value: bare when it has no space, quote, `=` or control
    /// character, else quoted with `"` and `\` escaped.
    static func logfmtValue(_ value: String) -> String {
        let needsQuotes =
            value.isEmpty
            || value.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7f }
        return needsQuotes ? jsonString(value) : value
    }

    /// `value` as a JSON string: quoted, with `"`, `\` and control characters escaped.
    static func jsonString(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
