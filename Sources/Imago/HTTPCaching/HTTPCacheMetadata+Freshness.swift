import Foundation

/// How a stored response may be used now.
enum CacheVerdict: Sendable, Equatable {
    /// Fresh: serve it without touching the network.
    case fresh
    /// Stale, but within `stale-while-revalidate`: serve it and refresh it in the background.
    case staleWhileRevalidate
    /// Stale (or `no-cache`): validate it with the server before using it.
    case stale
}

/// A stored response's age and freshness lifetime at one moment (RFC 9111 §4.2).
struct HTTPFreshness: Sendable, Equatable {
    /// Seconds the response may be used for without validation.
    var lifetime: Double
    /// Seconds since the origin server generated it.
    var age: Double
    var cacheControl: CacheControl

    var verdict: CacheVerdict {
        if cacheControl.noCache { return .stale }
        if age < lifetime { return .fresh }
        if !cacheControl.mustRevalidate, let window = cacheControl.staleWhileRevalidate, age < lifetime + Double(window) {
            return .staleWhileRevalidate
        }
        return .stale
    }

    /// Whether the stale response may stand in when the server cannot be
    /// reached (RFC 9111 §4.2.4, RFC 5861 §4): never under `no-cache` or
    /// `must-revalidate`; otherwise within `stale-if-error`, or whenever
    /// `offline` says so.
    func allowsStaleOnError(offline: Bool) -> Bool {
        guard !cacheControl.noCache, !cacheControl.mustRevalidate else { return false }
        if offline { return true }
        guard let window = cacheControl.staleIfError else { return false }
        return age < lifetime + Double(window)
    }
}

extension HTTPCacheMetadata {
    /// The response's freshness at `now`; heuristic lifetimes (10% of the
    /// time since Last-Modified) are capped at `maximumHeuristicLifetime`.
    func freshness(at now: Date, maximumHeuristicLifetime: Double) -> HTTPFreshness {
        let cacheControl = cacheControl
        let date = headers.first(.date).flatMap(HTTPDate.parse) ?? responseTime
        return HTTPFreshness(
            lifetime: lifetime(cacheControl, date: date, maximumHeuristicLifetime: maximumHeuristicLifetime),
            age: age(date: date, now: now),
            cacheControl: cacheControl
        )
    }

    /// RFC 9111 §4.2.1: max-age, else Expires minus Date (an invalid Expires
    /// means already expired), else the heuristic, else zero.
    private func lifetime(_ cacheControl: CacheControl, date: Date, maximumHeuristicLifetime: Double) -> Double {
        if let maxAge = cacheControl.maxAge { return Double(maxAge) }
        if let expires = headers.first(.expires) {
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        if let lastModified = lastModified.flatMap(HTTPDate.parse) {
            return min(max(0, date.timeIntervalSince(lastModified)) / 10, maximumHeuristicLifetime)
        }
        return 0
    }

    /// RFC 9111 §4.2.3: the larger of the apparent age and the Age field
    /// corrected by the response delay, plus the time spent in this cache.
    private func age(date: Date, now: Date) -> Double {
        let apparentAge = max(0, responseTime.timeIntervalSince(date))
        let ageValue = headers.first(.age).flatMap { Double($0.trimmingASCIISpaces()) }.map { max(0, $0) } ?? 0
        let responseDelay = responseTime.timeIntervalSince(requestTime)
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        return correctedInitialAge + max(0, now.timeIntervalSince(responseTime))
    }
}
