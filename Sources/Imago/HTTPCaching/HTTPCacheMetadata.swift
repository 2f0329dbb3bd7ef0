import Foundation

/// What the disk cache keeps of an HTTP exchange beside the body: when it
/// happened, the response fields that decide freshness and validation, and
/// the request's values of the fields the response varies on. Stored in the
/// entry's metadata blob (``CachedData/metadata``).
struct HTTPCacheMetadata: Sendable, Equatable {
    /// The response fields kept (RFC 9111 §3 asks for the whole header; these
    /// are the ones a private image cache reads back).
    static let storedFields: Set<HTTPField.Name> = [.date, .age, .cacheControl, .expires, .eTag, .lastModified, .vary, .contentType]

    /// When the request was sent and the response received (RFC 9111 §4.2.3).
    var requestTime: Date
    var responseTime: Date
    /// The kept response fields, in the order received (stored with names lowercased).
    var headers: HTTPFields
    /// The request's values of the fields named by Vary (absent fields left out).
    var varyingRequestHeaders: HTTPFields

    init(responseHeaders: HTTPFields, requestHeaders: HTTPFields, requestTime: Date, responseTime: Date) {
        self.requestTime = requestTime
        self.responseTime = max(responseTime, requestTime)
        headers = responseHeaders.filter { Self.storedFields.contains($0.name) }
        // Set first: `varyFields` reads `self`, so every property needs a value.
        varyingRequestHeaders = [:]
        varyingRequestHeaders = HTTPFields(
            varyFields.compactMap { name in
                Self.first(name, in: requestHeaders).map { HTTPField(name: name, value: $0) }
            })
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
    /// a final 200 or 203, no `no-store` in the response or the request, and
    /// not `Vary: *`.
    func isStorable(statusCode: Int, requestHeaders: HTTPFields) -> Bool {
        let requestDirectives = CacheControl(requestHeaders[values: .cacheControl])
        return (statusCode == 200 || statusCode == 203) && !requestDirectives.noStore
            && !cacheControl.noStore && !varyFields.contains(where: \.isAnyField)
    }

    /// The entry after a 304 (RFC 9111 §4.3.4): the new exchange's times, and
    /// each kept field the 304 carries replaces the stored ones of that name.
    func updated(with notModified: HTTPFields, requestTime: Date, responseTime: Date) -> HTTPCacheMetadata {
        let fresh = HTTPCacheMetadata(responseHeaders: notModified, requestHeaders: [:], requestTime: requestTime, responseTime: responseTime)
        let replaced = Set(fresh.headers.map(\.name))
        var updated = self
        updated.requestTime = fresh.requestTime
        updated.responseTime = fresh.responseTime
        updated.headers = headers.filter { !replaced.contains($0.name) } + fresh.headers
        return updated
    }

    private static func first(_ name: HTTPField.Name, in headers: HTTPFields) -> String? {
        headers.first(name)?.trimmingASCIISpaces().description
    }
}

extension HTTPField.Name {
    /// Whether this is Vary's `*`: the response varies on more than request fields.
    fileprivate var isAnyField: Bool { canonicalName == "*" }
}

// MARK: Encoding

extension HTTPCacheMetadata {
    private static let magic: [UInt8] = [0x49, 0x48, 0x01]  // "IH", version 1

    /// A compact binary form: magic, two times, then length-prefixed fields,
    /// names lowercased.
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
        bytes.appendLittleEndian(requestTime.timeIntervalSince1970.bitPattern)
        bytes.appendLittleEndian(responseTime.timeIntervalSince1970.bitPattern)
        append(headers)
        append(varyingRequestHeaders)
        return Data(bytes)
    }

    /// Decodes ``encoded()``; `nil` for anything else (an entry stored by an
    /// app through the cache API, or damaged metadata).
    init?(decoding data: Data) {
        var reader = ByteReader([UInt8](data))
        guard reader.take(Self.magic.count) == Self.magic[...],
            let requestTime = reader.integer(UInt64.self).map({ Double(bitPattern: $0) }),
            let responseTime = reader.integer(UInt64.self).map({ Double(bitPattern: $0) }),
            requestTime.isFinite, responseTime.isFinite,
            let headers = reader.fields(), let varying = reader.fields(), reader.isAtEnd
        else { return nil }
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
