import Foundation

/// How a stored response may be used now.
enum CacheVerdict: Sendable, Equatable {
    /// Fresh: serve it without touching the network.
    case fresh
    /// Stale, but within `stale-while-revalidate`: serve it and refresh it in the background.
    case staleWhileRevalidate
    /// Stale, but within the request's `max-stale`: serve it as it is.
    case staleAccepted
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

    var verdict: CacheVerdict { verdict(for: nil) }

    /// The verdict for a request with these directives (RFC 9111 §5.2.1):
    /// its `no-cache`, `max-age` and `min-fresh` ask for more than the
    /// response's own freshness, its `max-stale` accepts a stale response
    /// that does not say `must-revalidate`.
    func verdict(for request: CacheControl?) -> CacheVerdict {
        if cacheControl.noCache || request?.noCache == true { return .stale }
        if let maxAge = request?.maxAge, age > Double(maxAge) { return .stale }
        if let minFresh = request?.minFresh, lifetime - age < Double(minFresh) { return .stale }
        if age < lifetime { return .fresh }
        if !cacheControl.mustRevalidate, let maxStale = request?.maxStale, age - lifetime <= Double(maxStale) { return .staleAccepted }
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
            lifetime: explicitLifetime(cacheControl, date: date) ?? heuristicLifetime(cacheControl, date: date, cap: maximumHeuristicLifetime),
            age: age(date: date, now: now),
            cacheControl: cacheControl
        )
    }

    /// RFC 9111 §4.2.1: max-age, else Expires minus Date; `nil` if the
    /// response has neither. An invalid Expires, or more than one, means
    /// already expired (§5.3).
    private func explicitLifetime(_ cacheControl: CacheControl, date: Date) -> Double? {
        if let maxAge = cacheControl.maxAge { return Double(maxAge) }
        let expires = headers[values: .expires]
        guard !expires.isEmpty else { return nil }
        guard expires.count == 1, let expiry = HTTPDate.parse(expires[0]) else { return 0 }
        return max(0, expiry.timeIntervalSince(date))
    }

    /// RFC 9111 §4.2.2: 10% of the time since Last-Modified, for a status
    /// that allows a heuristic (or a response marked public or private).
    private func heuristicLifetime(_ cacheControl: CacheControl, date: Date, cap: Double) -> Double {
        guard Self.heuristicallyCacheable.contains(statusCode) || cacheControl.isPublicOrPrivate,
            let lastModified = lastModified.flatMap(HTTPDate.parse)
        else { return 0 }
        return min(max(0, date.timeIntervalSince(lastModified)) / 10, cap)
    }

    /// RFC 9111 §4.2.3: the larger of the apparent age and the Age field
    /// corrected by the response delay, plus the time spent in this cache.
    private func age(date: Date, now: Date) -> Double {
        let apparentAge = max(0, responseTime.timeIntervalSince(date))
        let responseDelay = responseTime.timeIntervalSince(requestTime)
        let correctedInitialAge = max(apparentAge, (Self.ageValue(headers) ?? 0) + responseDelay)
        return correctedInitialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// The Age field (RFC 9111 §5.1): the first value of the first field
    /// line, if it is delta-seconds (capped at 2^31); `nil` for anything
    /// else (`7200.0`, `-1`, `7200;x=1`), which is ignored.
    static func ageValue(_ headers: HTTPFields) -> Double? {
        guard let line = headers.first(.age) else { return nil }
        let first = line.prefix { $0 != "," }.trimmingASCIISpaces()
        guard !first.isEmpty, first.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return first.count > 10 ? Double(1 << 31) : min(Double(first) ?? 0, Double(1 << 31))
    }
}
