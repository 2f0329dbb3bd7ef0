import Foundation

/// One range of a `Range: bytes=…` field (RFC 9110 §14.1.2): `first-last`,
/// `first-`, or the last `suffix` bytes (`-suffix`).
struct ByteRange: Equatable {
    var first: Int?
    var last: Int?

    /// The field's one range; `nil` for another unit, several ranges or
    /// bad syntax, which a server may answer with the whole body.
    init?(_ field: String) {
        let text = field.trimmingASCIISpaces()
        guard text.count > 6, text.prefix(6).lowercased() == "bytes=" else { return nil }
        let spec = text.dropFirst(6).trimmingASCIISpaces()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let (start, end) = (spec[..<dash], spec[spec.index(after: dash)...])
        guard start.allSatisfy(\.isASCIIDigit), end.allSatisfy(\.isASCIIDigit), !(start.isEmpty && end.isEmpty),
            start.count < 19, end.count < 19
        else { return nil }
        first = Int(start)
        last = Int(end)
        if let first, let last, last < first { return nil }
    }

    /// The bytes of a body of `length` bytes it selects; `nil` if none (416).
    func bounds(in length: Int) -> ClosedRange<Int>? {
        guard let first else {
            guard let suffix = last, suffix > 0, length > 0 else { return nil }
            return max(0, length - suffix)...(length - 1)
        }
        guard first < length else { return nil }
        return first...min(last ?? (length - 1), length - 1)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension DataResponse {
    /// This stored full answer (a 200) as the answer to a request with
    /// `range` (RFC 9110 §14.2): a 206 with the part and its Content-Range,
    /// or a 416 when the range misses the body. It stays whole when the
    /// Range cannot be read or names several ranges, or when `ifRange`
    /// (an ETag, compared strongly, or a date equal to Last-Modified) names
    /// another version.
    func part(_ range: String, ifRange: String?) -> DataResponse {
        guard statusCode == 200, let range = ByteRange(range) else { return self }
        if let ifRange {
            let isTag = ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/")
            let current = isTag ? headers.first(.eTag) : headers.first(.lastModified)
            guard let current, current == ifRange, !current.hasPrefix("W/") else { return self }
        }
        var part = self
        guard let bounds = range.bounds(in: data.count) else {
            part.statusCode = 416
            part.data = Data()
            part.headers[.contentRange] = "bytes */\(data.count)"
            part.headers[.contentLength] = "0"
            return part
        }
        part.statusCode = 206
        part.data = data.subdata(in: (data.startIndex + bounds.lowerBound)..<(data.startIndex + bounds.upperBound + 1))
        part.headers[.contentRange] = "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(data.count)"
        part.headers[.contentLength] = String(part.data.count)
        return part
    }
}
