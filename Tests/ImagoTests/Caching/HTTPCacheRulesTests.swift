import Foundation
import ImagoSandbox
import Testing

@testable import Imago

@Suite("HTTP caching rules: dates, Cache-Control, freshness, stored metadata")
struct HTTPCacheRulesTests {
    static let rfcExample = Date(timeIntervalSince1970: 784_111_777) // Sun, 06 Nov 1994 08:49:37 GMT

    @Test("the three HTTP date forms parse to the same instant; IMF-fixdate is what is written")
    func dateForms() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Self.rfcExample)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Self.rfcExample)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Self.rfcExample)
        #expect(HTTPDate.format(Self.rfcExample) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test("formatting then parsing gives back the second, from 1900 to 2199, leap days included")
    func dateRoundTrip() {
        var generator = SeededGenerator(seed: 7)
        let samples = (0..<2000).map { _ in Double(Int.random(in: -2_208_988_800...7_258_118_399, using: &generator)) }
        let leapDay = Double(HTTPDate.daysSince1970(year: 2024, month: 2, day: 29) * 86_400 + 3661)
        for seconds in samples + [0, -1, leapDay] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date, "\(HTTPDate.format(date))")
        }
        #expect(HTTPDate.format(Date(timeIntervalSince1970: leapDay)) == "Thu, 29 Feb 2024 01:01:01 GMT")
    }

    @Test("malformed dates are nil, never a crash", arguments: [
        "", "0", "-1", "garbage", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:49:37 GMT",
        "Sun, 06 Xyz 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 99999 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49", String(repeating: "9", count: 400),
    ])
    func malformedDates(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("Cache-Control directives are read case-insensitively across several field values")
    func cacheControl() {
        let parsed = CacheControl(["public, MAX-AGE=60, must-revalidate", "stale-while-revalidate=30,stale-if-error=\"600\""])
        #expect(parsed.maxAge == 60 && parsed.mustRevalidate && !parsed.noStore && !parsed.noCache)
        #expect(parsed.staleWhileRevalidate == 30 && parsed.staleIfError == 600)
        #expect(CacheControl(["no-store"]).noStore)
        #expect(CacheControl(["no-cache=\"Set-Cookie\""]).noCache)
        #expect(CacheControl(["max-age=abc"]).maxAge == 0, "a broken max-age makes the entry stale, not fresh")
        #expect(CacheControl(["max-age=99999999999999999999999"]).maxAge == 1 << 31)
        #expect(CacheControl(["immutable"]).immutable)
        #expect(CacheControl([]) == CacheControl([""]))
        #expect(CacheControl([" \tMax-Age = 5\t, ,IMMUTABLE "]) == CacheControl(["max-age=5, immutable"]), "spaces, tabs and empty directives")
        #expect(CacheControl(["max-age=\u{0663}"]).maxAge == 0, "only ASCII digits count")
        #expect(CacheControl(["max-age=\"\""]).maxAge == 0 && CacheControl(["max-age=\""]).maxAge == 0, "empty or lone quotes")
        #expect(CacheControl(["max-age=4294967295"]).maxAge == 1 << 31 && CacheControl(["max-age=0012"]).maxAge == 12)
        #expect(CacheControl(["max-agex=5", "no-stor", "=5"]) == CacheControl([]), "only whole names match")
    }

    /// Metadata for a response received at `received` (sent one second before).
    func metadata(_ headers: [(String, String)], received: Date = rfcExample) -> HTTPCacheMetadata {
        HTTPCacheMetadata(
            responseHeaders: headers.map { HTTPHeader($0.0, $0.1) },
            requestHeaders: [HTTPHeader("Accept", "image/webp")],
            requestTime: received.addingTimeInterval(-1),
            responseTime: received
        )
    }

    func verdict(_ headers: [(String, String)], after seconds: Double, heuristicCap: Double = 86_400) -> CacheVerdict {
        metadata(headers).freshness(at: Self.rfcExample.addingTimeInterval(seconds), maximumHeuristicLifetime: heuristicCap).verdict
    }

    @Test("max-age, Expires minus Date, and the Age field decide freshness; the response delay counts as age")
    func explicitFreshness() {
        #expect(verdict([("Cache-Control", "max-age=100")], after: 98) == .fresh)
        #expect(verdict([("Cache-Control", "max-age=100")], after: 99) == .stale, "one second of response delay is part of the age")
        #expect(verdict([("Cache-Control", "max-age=100"), ("Age", "80")], after: 10) == .fresh)
        #expect(verdict([("Cache-Control", "max-age=100"), ("Age", "80")], after: 20) == .stale)
        let date = HTTPDate.format(Self.rfcExample.addingTimeInterval(-50))
        #expect(verdict([("Cache-Control", "max-age=100"), ("Date", date)], after: 49) == .fresh, "apparent age 50")
        #expect(verdict([("Cache-Control", "max-age=100"), ("Date", date)], after: 51) == .stale)
        let expires = HTTPDate.format(Self.rfcExample.addingTimeInterval(300))
        let now = HTTPDate.format(Self.rfcExample)
        #expect(verdict([("Date", now), ("Expires", expires)], after: 250) == .fresh)
        #expect(verdict([("Date", now), ("Expires", expires)], after: 310) == .stale)
        #expect(verdict([("Expires", expires), ("Cache-Control", "max-age=10")], after: 20) == .stale, "max-age wins over Expires")
        #expect(verdict([("Expires", "0")], after: 0) == .stale, "an invalid Expires is in the past")
        #expect(verdict([], after: 0) == .stale, "no expiry and no Last-Modified: no heuristic")
    }

    @Test("without explicit expiry, 10% of the time since Last-Modified, capped")
    func heuristicFreshness() {
        let tenDaysAgo = HTTPDate.format(Self.rfcExample.addingTimeInterval(-10 * 86_400))
        let headers = [("Date", HTTPDate.format(Self.rfcExample)), ("Last-Modified", tenDaysAgo)]
        #expect(verdict(headers, after: 0.9 * 86_400) == .fresh)
        #expect(verdict(headers, after: 1.1 * 86_400) == .stale)
        #expect(verdict(headers, after: 3600, heuristicCap: 1800) == .stale, "capped at 30 minutes")
    }

    @Test("no-cache always revalidates; stale-while-revalidate serves stale within its window unless must-revalidate")
    func directives() {
        #expect(verdict([("Cache-Control", "max-age=600, no-cache")], after: 0) == .stale)
        #expect(verdict([("Cache-Control", "max-age=10, stale-while-revalidate=60")], after: 30) == .staleWhileRevalidate)
        #expect(verdict([("Cache-Control", "max-age=10, stale-while-revalidate=60")], after: 80) == .stale)
        #expect(verdict([("Cache-Control", "max-age=10, stale-while-revalidate=60, must-revalidate")], after: 30) == .stale)
    }

    @Test("a stale copy stands in for an error within stale-if-error, or offline, never under must-revalidate or no-cache")
    func staleOnError() {
        func allows(_ directives: String, after seconds: Double, offline: Bool) -> Bool {
            metadata([("Cache-Control", directives)])
                .freshness(at: Self.rfcExample.addingTimeInterval(seconds), maximumHeuristicLifetime: 0)
                .allowsStaleOnError(offline: offline)
        }
        #expect(allows("max-age=10, stale-if-error=60", after: 50, offline: false))
        #expect(!allows("max-age=10, stale-if-error=60", after: 80, offline: false))
        #expect(!allows("max-age=10", after: 50, offline: false))
        #expect(allows("max-age=10", after: 1_000_000, offline: true))
        #expect(!allows("max-age=10, must-revalidate", after: 50, offline: true))
        #expect(!allows("no-cache, stale-if-error=60", after: 0, offline: true))
    }

    @Test("only the fields that matter are kept, and they survive encoding; Vary values are matched")
    func metadataFields() throws {
        let stored = metadata([
            ("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Set-Cookie", "secret=1"), ("Vary", "Accept, Accept-Language"),
        ])
        #expect(stored.first("set-cookie") == nil)
        #expect(stored.etag == "\"v1\"")
        #expect(stored.varyingRequestHeaders == [HTTPHeader("accept", "image/webp")])
        let decoded = try #require(HTTPCacheMetadata(decoding: stored.encoded()))
        #expect(decoded == stored)
        #expect(decoded.matchesVary([HTTPHeader("ACCEPT", " image/webp ")]))
        #expect(!decoded.matchesVary([HTTPHeader("Accept", "image/png")]))
        #expect(!decoded.matchesVary([HTTPHeader("Accept", "image/webp"), HTTPHeader("Accept-Language", "fr")]))
        #expect(!metadata([("Vary", "*")]).matchesVary([]))
    }

    @Test("storable: 200 or 203 without no-store in response or request, and not Vary: *")
    func storable() {
        let plain = metadata([("Cache-Control", "max-age=60")])
        #expect(plain.isStorable(statusCode: 200, requestHeaders: []))
        #expect(plain.isStorable(statusCode: 203, requestHeaders: []))
        #expect(!plain.isStorable(statusCode: 206, requestHeaders: []))
        #expect(!plain.isStorable(statusCode: 200, requestHeaders: [HTTPHeader("Cache-Control", "no-store")]))
        #expect(!metadata([("Cache-Control", "no-store")]).isStorable(statusCode: 200, requestHeaders: []))
        #expect(!metadata([("Vary", "Accept, *")]).isStorable(statusCode: 200, requestHeaders: []))
    }

    @Test("a 304 replaces the fields it carries and the exchange times, and keeps the rest")
    func notModifiedUpdate() {
        let stored = metadata([("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Content-Type", "image/png")])
        let later = Self.rfcExample.addingTimeInterval(500)
        let updated = stored.updated(
            with: [HTTPHeader("Cache-Control", "max-age=120"), HTTPHeader("Connection", "keep-alive")],
            requestTime: later, responseTime: later
        )
        #expect(updated.values("cache-control") == ["max-age=120"])
        #expect(updated.etag == "\"v1\"" && updated.first("content-type") == "image/png")
        #expect(updated.first("connection") == nil)
        #expect(updated.freshness(at: later.addingTimeInterval(100), maximumHeuristicLifetime: 0).verdict == .fresh)
    }

    @Test("every truncation and 300 seeded mutations of stored metadata decode to a value or nil, never a crash")
    func damagedMetadata() {
        let encoded = [UInt8](metadata([("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Vary", "Accept")]).encoded())
        for length in 0..<encoded.count {
            #expect(HTTPCacheMetadata(decoding: Data(encoded[..<length])) == nil)
        }
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<300 {
            var bytes = encoded
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            _ = HTTPCacheMetadata(decoding: Data(bytes))?.freshness(at: Self.rfcExample, maximumHeuristicLifetime: 60)
        }
    }
}
