import Foundation
import Imago

/// How much longer a source response stays fresh (RFC 9111 §4.2): its
/// max-age, or Expires minus Date, less its age (the larger of its Age
/// field and the time since its Date). `nil` when it states no lifetime;
/// 0 under no-store or no-cache.
enum SourceFreshness {
    static func remaining(_ headers: HTTPFields, now: Date = Date()) -> Int? {
        func values(_ name: String) -> [String] { HTTPField.Name(name).map { headers[values: $0] } ?? [] }
        let cacheControl = CacheControl(values("Cache-Control"))
        if cacheControl.noStore || cacheControl.noCache { return 0 }
        let date = values("Date").first.flatMap(HTTPDate.parse)
        let lifetime: Double
        if let maxAge = cacheControl.maxAge {
            lifetime = Double(maxAge)
        } else if let expires = values("Expires").first {
            guard let expiry = HTTPDate.parse(expires), let date else { return 0 }
            lifetime = expiry.timeIntervalSince(date)
        } else {
            return nil
        }
        let ageField = values("Age").first.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let age = max(ageField, date.map { now.timeIntervalSince($0) } ?? 0, 0)
        return max(0, Int(lifetime - age))
    }
}
