import Foundation
import Imago
import ImagoCaching

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
        let remaining = source.freshness.isStale ? 0 : source.remainingLifetime().map { Int($0.components.seconds) }
        maxAge = min(configuredMaxAge, remaining ?? configuredMaxAge)
        lifetime = min(resultLifetime, .seconds(remaining ?? Int(resultLifetime.components.seconds)))
    }
}
