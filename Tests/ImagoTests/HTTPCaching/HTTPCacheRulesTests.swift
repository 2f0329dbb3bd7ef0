import Foundation
import ImagoSandbox
import Testing

@testable import Imago

@Suite("HTTP caching rules: dates, Cache-Control, freshness, stored metadata")
struct HTTPCacheRulesTests {
    static let rfcExample = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

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

    @Test(
        "malformed dates are nil, never a crash",
        arguments: [
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
    func metadata(_ headers: HTTPFields, received: Date = rfcExample) -> HTTPCacheMetadata {
        HTTPCacheMetadata(
            responseHeaders: headers,
            requestHeaders: [.accept: "image/webp"],
            requestTime: received.addingTimeInterval(-1),
            responseTime: received
        )
    }

    func verdict(_ headers: HTTPFields, after seconds: Double, heuristicCap: Double = 86_400) -> CacheVerdict {
        metadata(headers).freshness(at: Self.rfcExample.addingTimeInterval(seconds), maximumHeuristicLifetime: heuristicCap).verdict
    }

    @Test("max-age, Expires minus Date, and the Age field decide freshness; the response delay counts as age")
    func explicitFreshness() {
        #expect(verdict([.cacheControl: "max-age=100"], after: 98) == .fresh)
        #expect(verdict([.cacheControl: "max-age=100"], after: 99) == .stale, "one second of response delay is part of the age")
        #expect(verdict([.cacheControl: "max-age=100", .age: "80"], after: 10) == .fresh)
        #expect(verdict([.cacheControl: "max-age=100", .age: "80"], after: 20) == .stale)
        let date = HTTPDate.format(Self.rfcExample.addingTimeInterval(-50))
        #expect(verdict([.cacheControl: "max-age=100", .date: date], after: 49) == .fresh, "apparent age 50")
        #expect(verdict([.cacheControl: "max-age=100", .date: date], after: 51) == .stale)
        let expires = HTTPDate.format(Self.rfcExample.addingTimeInterval(300))
        let now = HTTPDate.format(Self.rfcExample)
        #expect(verdict([.date: now, .expires: expires], after: 250) == .fresh)
        #expect(verdict([.date: now, .expires: expires], after: 310) == .stale)
        #expect(verdict([.expires: expires, .cacheControl: "max-age=10"], after: 20) == .stale, "max-age wins over Expires")
        #expect(verdict([.expires: "0"], after: 0) == .stale, "an invalid Expires is in the past")
        #expect(verdict([:], after: 0) == .stale, "no expiry and no Last-Modified: no heuristic")
    }

    @Test("without explicit expiry, 10% of the time since Last-Modified, capped")
    func heuristicFreshness() {
        let tenDaysAgo = HTTPDate.format(Self.rfcExample.addingTimeInterval(-10 * 86_400))
        let headers: HTTPFields = [.date: HTTPDate.format(Self.rfcExample), .lastModified: tenDaysAgo]
        #expect(verdict(headers, after: 0.9 * 86_400) == .fresh)
        #expect(verdict(headers, after: 1.1 * 86_400) == .stale)
        #expect(verdict(headers, after: 3600, heuristicCap: 1800) == .stale, "capped at 30 minutes")
    }

    @Test("no-cache always revalidates; stale-while-revalidate serves stale within its window unless must-revalidate")
    func directives() {
        #expect(verdict([.cacheControl: "max-age=600, no-cache"], after: 0) == .stale)
        #expect(verdict([.cacheControl: "max-age=10, stale-while-revalidate=60"], after: 30) == .staleWhileRevalidate)
        #expect(verdict([.cacheControl: "max-age=10, stale-while-revalidate=60"], after: 80) == .stale)
        #expect(verdict([.cacheControl: "max-age=10, stale-while-revalidate=60, must-revalidate"], after: 30) == .stale)
    }

    @Test("a stale copy stands in for an error within stale-if-error, or offline, never under must-revalidate or no-cache")
    func staleOnError() {
        func allows(_ directives: String, after seconds: Double, offline: Bool) -> Bool {
            metadata([.cacheControl: directives])
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
            .cacheControl: "max-age=60", .eTag: "\"v1\"", .setCookie: "secret=1", .vary: "Accept, Accept-Language",
        ])
        #expect(!stored.headers.contains(.setCookie))
        #expect(stored.etag == "\"v1\"")
        #expect(stored.varyingRequestHeaders == [.accept: "image/webp"])
        let decoded = try #require(HTTPCacheMetadata(decoding: stored.encoded()))
        #expect(decoded == stored)
        #expect(decoded.matchesVary([.accept: " image/webp "]))
        #expect(!decoded.matchesVary([.accept: "image/png"]))
        #expect(!decoded.matchesVary([.accept: "image/webp", .acceptLanguage: "fr"]))
        #expect(!metadata([.vary: "*"]).matchesVary([:]))
    }

    @Test("stored metadata is byte for byte what earlier versions wrote, names lowercased: existing cache folders still read")
    func storedFormIsStable() throws {
        // What the encoder wrote for this exchange before fields were `HTTPFields` (at d1b46a9).
        let earlier =
            "494801000000406e55da41000010406e55da4107000400646174651d005468752c203031204a616e20323032362030303a3030"
            + "3a303020474d540c00636f6e74656e742d747970650a00696d6167652f776562700d0063616368652d636f6e74726f6c26006d"
            + "61782d6167653d3630302c207374616c652d7768696c652d726576616c69646174653d36300400657461670400227631220d00"
            + "6c6173742d6d6f6469666965641d005765642c2033312044656320323032352031323a30303a303020474d5404007661727917"
            + "004163636570742c204163636570742d4c616e67756167650d0063616368652d636f6e74726f6c0f006d7573742d726576616c"
            + "6964617465010006006163636570740e00696d6167652f776562702c2a2f2a"
        let response = HTTPFields([
            HTTPField(name: .date, value: "Thu, 01 Jan 2026 00:00:00 GMT"), HTTPField(name: .contentType, value: "image/webp"),
            HTTPField(name: .cacheControl, value: "max-age=600, stale-while-revalidate=60"), HTTPField(name: .eTag, value: "\"v1\""),
            HTTPField(name: .setCookie, value: "id=1"), HTTPField(name: .lastModified, value: "Wed, 31 Dec 2025 12:00:00 GMT"),
            HTTPField(name: .vary, value: "Accept, Accept-Language"), HTTPField(name: .cacheControl, value: "must-revalidate"),
        ])
        let metadata = HTTPCacheMetadata(
            responseHeaders: response, requestHeaders: [.accept: "image/webp,*/*", .userAgent: "Imago"],
            requestTime: Date(timeIntervalSince1970: 1_767_225_600), responseTime: Date(timeIntervalSince1970: 1_767_225_600.25)
        )
        #expect(Self.hexString(metadata.encoded()) == earlier)
        let decoded = try #require(HTTPCacheMetadata(decoding: Data(Self.bytes(hex: earlier))))
        #expect(decoded == metadata)
        #expect(decoded.headers.map(\.name.rawName) == ["date", "content-type", "cache-control", "etag", "last-modified", "vary", "cache-control"])
        #expect(Self.hexString(decoded.encoded()) == earlier)
    }

    static func hexString(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    static func bytes(hex text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0...($0 + 1)], as: UTF8.self), radix: 16) }
    }

    @Test("storable: 200 or 203 without no-store in response or request, and not Vary: *")
    func storable() {
        let plain = metadata([.cacheControl: "max-age=60"])
        #expect(plain.isStorable(statusCode: 200, requestHeaders: [:]))
        #expect(plain.isStorable(statusCode: 203, requestHeaders: [:]))
        #expect(!plain.isStorable(statusCode: 206, requestHeaders: [:]))
        #expect(!plain.isStorable(statusCode: 200, requestHeaders: [.cacheControl: "no-store"]))
        #expect(!metadata([.cacheControl: "no-store"]).isStorable(statusCode: 200, requestHeaders: [:]))
        #expect(!metadata([.vary: "Accept, *"]).isStorable(statusCode: 200, requestHeaders: [:]))
    }

    @Test("a 304 replaces the fields it carries and the exchange times, and keeps the rest")
    func notModifiedUpdate() {
        let stored = metadata([.cacheControl: "max-age=60", .eTag: "\"v1\"", .contentType: "image/png"])
        let later = Self.rfcExample.addingTimeInterval(500)
        let updated = stored.updated(
            with: [.cacheControl: "max-age=120", .connection: "keep-alive"],
            requestTime: later, responseTime: later
        )
        #expect(updated.headers[values: .cacheControl] == ["max-age=120"])
        #expect(updated.etag == "\"v1\"" && updated.headers[.contentType] == "image/png")
        #expect(!updated.headers.contains(.connection))
        #expect(updated.freshness(at: later.addingTimeInterval(100), maximumHeuristicLifetime: 0).verdict == .fresh)
    }

    @Test("every truncation and 300 seeded mutations of stored metadata decode to a value or nil, never a crash")
    func damagedMetadata() {
        let encoded = [UInt8](metadata([.cacheControl: "max-age=60", .eTag: "\"v1\"", .vary: "Accept"]).encoded())
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
