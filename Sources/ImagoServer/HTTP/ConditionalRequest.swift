import HTTPTypes
import Imago

/// A request's validators (RFC 9110 §13.1): whether the client's copy of
/// an answer is current, so that a 304 can stand in for the bytes.
struct ConditionalRequest {
    let ifNoneMatch: String?
    let ifModifiedSince: String?

    init(_ fields: HTTPFields) {
        ifNoneMatch = fields[.ifNoneMatch]
        ifModifiedSince = fields[.ifModifiedSince]
    }

    /// A matching If-None-Match, or, only when there is none, an
    /// If-Modified-Since no earlier than the answer's Last-Modified.
    func isCurrent(etag: String, lastModified: String?) -> Bool {
        if let ifNoneMatch {
            return ifNoneMatch.split(separator: ",").contains { tag in
                let tag = tag.trimmingCharacters(in: .whitespaces)
                return tag == "*" || tag == etag || tag == "W/" + etag
            }
        }
        guard let since = ifModifiedSince.flatMap(HTTPDate.parse), let modified = lastModified.flatMap(HTTPDate.parse) else { return false }
        return modified <= since
    }
}
