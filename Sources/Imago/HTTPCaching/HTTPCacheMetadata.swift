import Foundation

/// What the disk cache keeps of an HTTP exchange beside the body: when it
/// happened, the response's status and its end-to-end fields, and the
/// request's values of the fields the response varies on. Stored in the
/// entry's metadata blob (``CachedData/metadata``).
struct HTTPCacheMetadata: Sendable, Equatable {
    /// When the request was sent and the response received (RFC 9111 §4.2.3).
    var requestTime: Date
    var responseTime: Date
    /// The response's status code.
    var statusCode: Int
    /// The response fields kept (RFC 9111 §3.1: all but the connection's
    /// own and those `no-cache="…"` names), in the order received (stored
    /// with names lowercased).
    var headers: HTTPFields
    /// The request's values of the fields named by Vary (absent fields left out).
    var varyingRequestHeaders: HTTPFields

    init(statusCode: Int = 200, responseHeaders: HTTPFields, requestHeaders: HTTPFields, requestTime: Date, responseTime: Date) {
        self.requestTime = requestTime
        self.responseTime = max(responseTime, requestTime)
        self.statusCode = statusCode
        headers = Self.storable(responseHeaders)
        // Set first: `varyFields` reads `self`, so every property needs a value.
        varyingRequestHeaders = [:]
        varyingRequestHeaders = Self.varying(varyFields, of: requestHeaders)
    }

    /// The fields a cache keeps of `fields` (RFC 9111 §3.1): not the
    /// connection's own (hop-by-hop, proxy authentication, those Connection
    /// names), nor those a qualified `no-cache` names (§5.2.2.4), which may
    /// not be reused without the server's word.
    static func storable(_ fields: HTTPFields) -> HTTPFields {
        // One pass over the names first: most responses have nothing to drop, and are kept as they are.
        var dropped: Set<String> = []
        var dropsAny = false
        for field in fields {
            if field.name == .connection {
                dropped.formUnion(field.value.split(separator: ",").map { $0.trimmingASCIISpaces().lowercased() })
            } else if field.name == .cacheControl, field.value.utf8.contains(UInt8(ascii: "\"")) {
                // Only a quoted no-cache argument names fields (a byte scan: String.contains goes through NSString).
                dropped.formUnion(CacheControl([field.value]).noCacheFields)
            }
            dropsAny = dropsAny || hopByHop.contains(field.name)
        }
        guard dropsAny || !dropped.isEmpty else { return fields }
        return fields.filter { !hopByHop.contains($0.name) && !dropped.contains($0.name.canonicalName) }
    }

    /// Fields that belong to one connection, never stored (RFC 9110 §7.6.1, RFC 9111 §3.1);
    /// an array: a few short names compare faster than they hash.
    private static let hopByHop: [HTTPField.Name] = [
        .connection, .keepAlive, .proxyConnection, .te, .transferEncoding, .upgrade, .proxyAuthenticate, .proxyAuthenticationInfo,
        .proxyAuthorization,
    ]

    private static func varying(_ names: [HTTPField.Name], of requestHeaders: HTTPFields) -> HTTPFields {
        HTTPFields(names.compactMap { name in first(name, in: requestHeaders).map { HTTPField(name: name, value: $0) } })
    }

    // MARK: Fields

    var cacheControl: CacheControl { CacheControl(headers[values: .cacheControl]) }
    var etag: String? { headers.first(.eTag) }
    var lastModified: String? { headers.first(.lastModified) }

    /// The request fields named by Vary; `*` if the response varies on anything.
    var varyFields: [HTTPField.Name] {
        headers[values: .vary].flatMap { $0.split(separator: ",") }.compactMap { HTTPField.Name(String($0.trimmingASCIISpaces())) }
    }

    /// Whether a request with `requestHeaders` may be answered by this entry
    /// (RFC 9111 §4.1): every field the response varies on has the value it
    /// had in the stored exchange, absent fields matching absent ones.
    func matchesVary(_ requestHeaders: HTTPFields) -> Bool {
        varyFields.allSatisfy { name in
            !name.isAnyField && Self.first(name, in: requestHeaders) == varyingRequestHeaders.first(name)
        }
    }

    /// Whether the response may be stored by a private cache (RFC 9111 §3):
    /// a final status other than 206 and 304; no `no-store` in the request,
    /// nor in the response unless `must-understand` comes with a status
    /// this cache understands; not `Vary: *`; and a lifetime to go by:
    /// explicit (max-age, Expires), `public` or `private`, or a status
    /// that is heuristically cacheable.
    func isStorable(requestHeaders: HTTPFields) -> Bool {
        let response = cacheControl
        guard (200...599).contains(statusCode), statusCode != 206, statusCode != 304,
            !CacheControl(requestHeaders[values: .cacheControl]).noStore, !varyFields.contains(where: \.isAnyField)
        else { return false }
        if response.mustUnderstand {
            guard Self.understoodStatuses.contains(statusCode) else { return false }
        } else if response.noStore {
            return false
        }
        return response.maxAge != nil || headers.contains(.expires) || response.isPublicOrPrivate
            || Self.heuristicallyCacheable.contains(statusCode)
    }

    /// RFC 9110 §15.1: the statuses whose responses may be given a heuristic lifetime.
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The statuses RFC 9110 defines, whose caching rules this cache follows (for `must-understand`).
    static let understoodStatuses = Set(200...206).union(300...308).subtracting([306]).union(400...417).union([421, 422, 426])
        .union(500...505)

    /// The entry after a 304 (RFC 9111 §3.2, §4.3.4): the new exchange's
    /// times; each field the 304 carries replaces the stored ones of its
    /// name, except Content-Length and Content-Encoding, which describe the
    /// stored body as it was received; the request's values of the fields
    /// the response varies on, when `requestHeaders` is given (a 304 that
    /// chose this entry for another request).
    func updated(with notModified: HTTPFields, requestHeaders: HTTPFields? = nil, requestTime: Date, responseTime: Date) -> HTTPCacheMetadata {
        let fresh = Self.storable(notModified).filter { $0.name != .contentLength && $0.name != .contentEncoding }
        let replaced = Set(fresh.map(\.name))
        var updated = self
        updated.requestTime = requestTime
        updated.responseTime = max(responseTime, requestTime)
        updated.headers = headers.filter { !replaced.contains($0.name) } + fresh
        if let requestHeaders { updated.varyingRequestHeaders = Self.varying(updated.varyFields, of: requestHeaders) }
        return updated
    }

    /// The stored fields as they are served at `age` seconds old: with an
    /// Age field saying so (RFC 9111 §5.1, to the nearest second), in place
    /// of the stored one.
    func servedFields(age: Double) -> HTTPFields {
        var fields = headers
        fields[.age] = String(Int(min(max(0, age), Double(1 << 31)).rounded()))
        return fields
    }

    private static func first(_ name: HTTPField.Name, in headers: HTTPFields) -> String? {
        headers.first(name)?.trimmingASCIISpaces().description
    }
}

extension HTTPField.Name {
    /// Whether this is Vary's `*`: the response varies on more than request fields.
    fileprivate var isAnyField: Bool { canonicalName == "*" }

    static let pragma = HTTPField.Name("Pragma")!
    static let keepAlive = HTTPField.Name("Keep-Alive")!
    static let proxyConnection = HTTPField.Name("Proxy-Connection")!
}

// MARK: Encoding

extension HTTPCacheMetadata {
    /// "IH" and the version: 1 kept eight fields and no status (a 200),
    /// 2 the status and every stored field.
    private static let magic: [UInt8] = [0x49, 0x48, 0x02]
    private static let firstVersionMagic: [UInt8] = [0x49, 0x48, 0x01]

    /// A compact binary form: magic, the status, two times, then
    /// length-prefixed fields, names lowercased.
    func encoded() -> Data {
        var bytes = Self.magic
        func append(_ fields: HTTPFields) {
            let kept = fields.filter { $0.name.canonicalName.utf8.count <= UInt16.max && $0.value.utf8.count <= UInt16.max }
                .prefix(Int(UInt16.max))
            bytes.appendLittleEndian(UInt16(kept.count))
            for field in kept {
                bytes.appendLittleEndian(UInt16(field.name.canonicalName.utf8.count))
                bytes.append(contentsOf: field.name.canonicalName.utf8)
                bytes.appendLittleEndian(UInt16(field.value.utf8.count))
                bytes.append(contentsOf: field.value.utf8)
            }
        }
        bytes.appendLittleEndian(UInt16(clamping: statusCode))
        bytes.appendLittleEndian(requestTime.timeIntervalSince1970.bitPattern)
        bytes.appendLittleEndian(responseTime.timeIntervalSince1970.bitPattern)
        append(headers)
        append(varyingRequestHeaders)
        return Data(bytes)
    }

    /// Decodes ``encoded()``, and the first version's form (as a 200);
    /// `nil` for anything else (an entry stored by an app through the cache
    /// API, or damaged metadata).
    init?(decoding data: Data) {
        var reader = ByteReader([UInt8](data))
        guard let magic = reader.take(Self.magic.count) else { return nil }
        let statusCode: Int
        if magic == Self.magic[...], let status = reader.integer(UInt16.self), (100...999).contains(status) {
            statusCode = Int(status)
        } else if magic == Self.firstVersionMagic[...] {
            statusCode = 200
        } else {
            return nil
        }
        guard let requestTime = reader.integer(UInt64.self).map({ Double(bitPattern: $0) }),
            let responseTime = reader.integer(UInt64.self).map({ Double(bitPattern: $0) }),
            requestTime.isFinite, responseTime.isFinite,
            let headers = reader.fields(), let varying = reader.fields(), reader.isAtEnd
        else { return nil }
        self.statusCode = statusCode
        self.requestTime = Date(timeIntervalSince1970: requestTime)
        self.responseTime = Date(timeIntervalSince1970: responseTime)
        self.headers = headers
        self.varyingRequestHeaders = varying
    }
}

extension ByteReader {
    mutating func string() -> String? {
        guard let count = integer(UInt16.self), let slice = take(Int(count)) else { return nil }
        return String(validating: slice, as: UTF8.self)
    }

    /// Fields as ``HTTPCacheMetadata/encoded()`` writes them; `nil` if one
    /// is cut short or names no HTTP field, or there are more than
    /// `HTTPFields` holds.
    mutating func fields() -> HTTPFields? {
        guard let count = integer(UInt16.self), Int(count) <= HTTPFields.capacityLimit else { return nil }
        var fields = HTTPFields()
        fields.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let name = string().flatMap({ HTTPField.Name($0) }), let value = string() else { return nil }
            fields.append(HTTPField(name: name, value: value))
        }
        return fields
    }
}
