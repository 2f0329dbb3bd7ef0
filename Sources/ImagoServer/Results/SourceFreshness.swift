import Foundation
import Imago
import ImagoCaching

/// How much longer a source response stays fresh (RFC 9111 §4.2): its
/// max-age, or Expires minus Date, less its age (the larger of its Age
/// field and the time since its Date). `nil` when it states no lifetime;
/// 0 under no-store or no-cache.
enum SourceFreshness {
    static func remaining(_ headers: HTTPFields, now: Date = Date()) -> Int? {
        let cacheControl = CacheControl(headers[values: .cacheControl])
        if cacheControl.noStore || cacheControl.noCache { return 0 }
        let date = headers.first(.date).flatMap(HTTPDate.parse)
        let lifetime: Double
        if let maxAge = cacheControl.maxAge {
            lifetime = Double(maxAge)
        } else if let expires = headers.first(.expires) {
            guard let expiry = HTTPDate.parse(expires), let date else { return 0 }
            lifetime = expiry.timeIntervalSince(date)
        } else {
            return nil
        }
        let ageField = headers.first(.age).flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let age = max(ageField, date.map { now.timeIntervalSince($0) } ?? 0, 0)
        return max(0, Int(lifetime - age))
    }
}

/// What an answer inherits from the version of the source it is made
/// from: the validator that tells that version apart, its Last-Modified,
/// and how long the answer may be kept (by clients, and here).
struct SourceVersion {
    /// The source's ETag, else its Last-Modified, else a hash of its bytes:
    /// a source that comes back with the same one needs no new transformation.
    let validator: String
    let lastModified: String?
    /// The answer's max-age: `maxAge`, or less if the source is fresh for less.
    let maxAge: Int
    /// When the source must be asked again: the result lifetime, or
    /// sooner if the source is fresh for less.
    let lifetime: Duration

    init(_ source: DataResponse, maxAge configuredMaxAge: Int, resultLifetime: Duration) {
        // Without a validator of the source's own, its bytes' fingerprint: it
        // only tells versions of one URL apart, whose origin could change
        // them at will anyway, so XXH64 is enough.
        validator =
            source.headers.first(.eTag) ?? source.headers.first(.lastModified)
            ?? "xxh64:" + String(source.data.withUnsafeBytes { Checksum.hash($0) }, radix: 16)
        lastModified = source.headers.first(.lastModified)
        let remaining = source.freshness.isStale ? 0 : SourceFreshness.remaining(source.headers)
        maxAge = min(configuredMaxAge, remaining ?? configuredMaxAge)
        lifetime = min(resultLifetime, .seconds(remaining ?? Int(resultLifetime.components.seconds)))
    }
}
