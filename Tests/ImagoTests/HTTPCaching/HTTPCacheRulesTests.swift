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
        #expect(CacheControl(["no-cache=\"Set-Cookie\""]).noCacheFields == ["set-cookie"])
        #expect(CacheControl(["max-age=abc"]).maxAge == 0, "a broken max-age makes the entry stale, not fresh")
        #expect(CacheControl(["max-age=99999999999999999999999"]).maxAge == 1 << 31)
        #expect(CacheControl(["immutable"]).immutable)
        #expect(CacheControl([]) == CacheControl([""]))
        #expect(CacheControl([" \tMax-Age=5\t, ,IMMUTABLE "]) == CacheControl(["max-age=5, immutable"]), "spaces, tabs and empty directives")
        #expect(CacheControl(["max-age=\u{0663}"]).maxAge == 0, "only ASCII digits count")
        #expect(CacheControl(["max-age=\"\""]).maxAge == 0 && CacheControl(["max-age=\""]).maxAge == 0, "empty or lone quotes")
        #expect(CacheControl(["max-age=4294967295"]).maxAge == 1 << 31 && CacheControl(["max-age=0012"]).maxAge == 12)
        #expect(CacheControl(["max-agex=5", "no-stor", "=5"]) == CacheControl([]), "only whole names match")
    }

    @Test(
        "dates browsers read: the three forms, any letter case in names, spaces around; a two-digit RFC 850 year within 50 years ahead",
        arguments: [
            ("Thu, 18 Aug 2050 02:01:18 GMT", 2_544_400_878.0), ("THU, 18 AUG 2050 02:01:18 gMT", 2_544_400_878),
            ("  Thu, 18 Aug 2050 02:01:18 GMT\t", 2_544_400_878), ("Thursday, 18-Aug-50 02:01:18 GMT", 2_544_400_878),
            ("Thu Aug 18 02:01:18 2050", 2_544_400_878), ("Tue, 19 Jan 2038 14:14:08 GMT", 2_147_523_248),
            ("Sun, 21 Nov 2286 04:46:39 GMT", 10_000_039_599), ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
        ])
    func acceptedDates(text: String, seconds: Double) {
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(
        "dates browsers refuse are nil (an Expires that means already expired)",
        arguments: [
            "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 2050 02:01:18 AEST", "Thu, 18 Aug 50 02:01:18 GMT", "Thu 18 Aug 2050 02:01:18 GMT",
            "Thu, 18  Aug  2050 02:01:18 GMT", "Thu, 18-Aug-2050 02:01:18 GMT", "Thu, 18 Aug 2050 02.01.18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT",
            "Xyz, 18 Aug 2050 02:01:18 GMT", "Thu, 31 Feb 2050 02:01:18 GMT", "Thu, 29 Feb 2100 02:01:18 GMT", "Thurs, 18-Aug-50 02:01:18 GMT",
            "Thu Aug 18 02:01:18 50", "Thu, 18 Aug 2050 02:01:18 GMT x",
        ])
    func refusedDates(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("3,000 seeded random field values of HTTP's punctuation give a value or nil from every parser, never a crash")
    func randomFieldValues() {
        var generator = SeededGenerator(seed: 25)
        let alphabet = Array("max-age=no-cache\"\\, ;=0123456789 \t-GMTSunNov:bytes".unicodeScalars) + ["\u{0}", "\u{FF}", "é"]
        for _ in 0..<3000 {
            let length = Int.random(in: 0...40, using: &generator)
            let text = String(String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            let directives = CacheControl([text, text])
            #expect(directives.maxAge.map { (0...(1 << 31)).contains($0) } ?? true, "\(text)")
            _ = CacheControl(request: [.cacheControl: text, .pragma: text])
            _ = HTTPDate.parse(text)
            _ = HTTPCacheMetadata.ageValue([.age: text])
            if let range = ByteRange(text) { _ = range.bounds(in: Int.random(in: 0...100, using: &generator)) }
        }
    }

    @Test("Age: the first value of the first line if it is delta-seconds, capped at 2^31; anything else is ignored")
    func ageParsing() {
        #expect(HTTPCacheMetadata.ageValue([.age: "7200, 0"]) == 7200)
        #expect(HTTPCacheMetadata.ageValue([.age: "0, 7200"]) == 0)
        #expect(HTTPCacheMetadata.ageValue(HTTPFields([HTTPField(name: .age, value: "7200"), HTTPField(name: .age, value: "0")])) == 7200)
        #expect(HTTPCacheMetadata.ageValue([.age: " 30 "]) == 30)
        for ignored in ["7200.0", "-7200", "abc", "", "7200;foo=bar", "+5"] {
            #expect(HTTPCacheMetadata.ageValue([.age: ignored]) == nil, "\(ignored)")
        }
        #expect(HTTPCacheMetadata.ageValue([.age: "2147483649"]) == 2_147_483_648)
        #expect(HTTPCacheMetadata.ageValue([.age: "99999999999999999999"]) == 2_147_483_648)
        #expect(verdict([.cacheControl: "max-age=3600", .age: "7200.0"], after: 0) == .fresh, "an invalid Age is ignored")
        #expect(verdict([.cacheControl: "max-age=3600", .age: "7200, 0"], after: 0) == .stale)
        #expect(verdict([.cacheControl: "max-age=3600", .age: "2147483648"], after: 0) == .stale)
    }

    @Test("Cache-Control as RFC 9110 §5.6 writes it: the first max-age wins, quoted strings hide commas, no spaces around =")
    func cacheControlSyntax() {
        #expect(CacheControl(["max-age=1800, max-age=1"]).maxAge == 1800)
        #expect(CacheControl(["max-age=1800", "max-age=1"]).maxAge == 1800)
        #expect(CacheControl(["max-age=1, max-age=1800"]).maxAge == 1)
        #expect(CacheControl(["max-age=\"3600\""]).maxAge == 3600, "the quoted form is accepted")
        #expect(CacheControl(["extension=\"max-age=3600\", max-age=1"]).maxAge == 1, "max-age inside a quoted string is not one")
        #expect(CacheControl(["max-age=1, extension=\"max-age=3600, no-store\""]) == CacheControl(["max-age=1"]))
        #expect(CacheControl(["max-age =3600"]).maxAge == 0 && CacheControl(["max-age= 3600"]).maxAge == 0, "spaces around = spoil it")
        #expect(CacheControl(["no-store =1, public"]) == CacheControl(["public"]), "a malformed directive is ignored")
        #expect(CacheControl(["max-age=003600"]).maxAge == 3600)
        for broken in ["'3600'", "3600.0", "3600.5", "a3600", "3600a", "-1"] {
            #expect(CacheControl(["max-age=\(broken)"]).maxAge == 0, "\(broken): not delta-seconds, so stale")
        }
        let qualified = CacheControl(["no-cache=\"Set-Cookie, X-Token\", max-age=60"])
        #expect(!qualified.noCache && qualified.noCacheFields == ["set-cookie", "x-token"] && qualified.maxAge == 60)
        #expect(CacheControl(["no-cache"]).noCache && CacheControl(["No-CaChE"]).noCache && CacheControl(["no-cache=\"\""]).noCache)
        #expect(CacheControl(["no-cache=Set-Cookie"]).noCache, "an unquoted field name is read as plain no-cache, the stricter")
        #expect(CacheControl(["must-understand, no-store"]).mustUnderstand)
        let request = CacheControl(["max-stale, min-fresh=30, only-if-cached"])
        #expect(request.maxStale == Int.max && request.minFresh == 30 && request.onlyIfCached)
        #expect(CacheControl(["max-stale=60"]).maxStale == 60)
    }

    @Test("the request's directives (RFC 9111 §5.2.1), and Pragma: no-cache when it has no Cache-Control (§5.4)")
    func requestDirectives() {
        func verdict(_ response: HTTPFields, after seconds: Double, request: HTTPFields) -> CacheVerdict {
            metadata(response).freshness(at: Self.rfcExample.addingTimeInterval(seconds), maximumHeuristicLifetime: 0)
                .verdict(for: CacheControl(request: request))
        }
        let fresh: HTTPFields = [.cacheControl: "max-age=3600"]
        #expect(verdict(fresh, after: 10, request: [:]) == .fresh)
        #expect(verdict(fresh, after: 10, request: [.cacheControl: "max-age=0"]) == .stale)
        #expect(verdict(fresh, after: 10, request: [.cacheControl: "max-age=60"]) == .fresh)
        #expect(verdict([.cacheControl: "max-age=3600", .age: "1800"], after: 0, request: [.cacheControl: "max-age=600"]) == .stale)
        #expect(verdict(fresh, after: 10, request: [.cacheControl: "no-cache"]) == .stale)
        #expect(verdict(fresh, after: 10, request: [.pragma: "no-cache"]) == .stale)
        #expect(verdict(fresh, after: 10, request: [.pragma: "no-cache", .cacheControl: "max-stale"]) == .fresh, "Cache-Control wins over Pragma")
        #expect(verdict(fresh, after: 10, request: [.pragma: "x-extension"]) == .fresh)
        #expect(verdict(fresh, after: 3000, request: [.cacheControl: "min-fresh=1200"]) == .stale)
        #expect(verdict(fresh, after: 2000, request: [.cacheControl: "min-fresh=1200"]) == .fresh)
        #expect(verdict(fresh, after: 4000, request: [.cacheControl: "max-stale=1000"]) == .staleAccepted)
        #expect(verdict(fresh, after: 5000, request: [.cacheControl: "max-stale=1000"]) == .stale)
        #expect(verdict(fresh, after: 1e6, request: [.cacheControl: "max-stale"]) == .staleAccepted)
        #expect(verdict([.cacheControl: "max-age=3600, must-revalidate"], after: 4000, request: [.cacheControl: "max-stale"]) == .stale)
    }

    @Test("Expires: one valid date; an invalid one, or two lines, is already expired; a heuristic only for the statuses that allow one")
    func expiresAndHeuristics() {
        let date = HTTPDate.format(Self.rfcExample)
        let later = HTTPDate.format(Self.rfcExample.addingTimeInterval(600))
        #expect(verdict([.date: date, .expires: later], after: 10) == .fresh)
        #expect(
            verdict(
                HTTPFields([HTTPField(name: .date, value: date), HTTPField(name: .expires, value: later), HTTPField(name: .expires, value: later)]),
                after: 10) == .stale)
        #expect(verdict([.date: date, .expires: "Thu, 18 Aug 50 02:01:18 GMT"], after: 10) == .stale)
        let lastModified = HTTPDate.format(Self.rfcExample.addingTimeInterval(-10 * 86_400))
        func heuristic(_ status: Int, _ extra: HTTPFields = [:]) -> CacheVerdict {
            HTTPCacheMetadata(
                statusCode: status, responseHeaders: [.date: date, .lastModified: lastModified] + extra, requestHeaders: [:],
                requestTime: Self.rfcExample, responseTime: Self.rfcExample
            ).freshness(at: Self.rfcExample.addingTimeInterval(60), maximumHeuristicLifetime: 86_400).verdict
        }
        #expect(heuristic(200) == .fresh && heuristic(404) == .fresh && heuristic(301) == .fresh)
        #expect(heuristic(302) == .stale && heuristic(500) == .stale)
        #expect(heuristic(500, [.cacheControl: "public"]) == .fresh)
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

    @Test("every end-to-end field is kept and survives encoding; Vary values are matched")
    func metadataFields() throws {
        let stored = metadata([
            .cacheControl: "max-age=60", .eTag: "\"v1\"", .setCookie: "secret=1", .vary: "Accept, Accept-Language",
            .contentDisposition: "inline", .xToken: "kept",
        ])
        #expect(stored.headers[.setCookie] == "secret=1" && stored.headers[.contentDisposition] == "inline" && stored.headers[.xToken] == "kept")
        #expect(stored.etag == "\"v1\"")
        #expect(stored.varyingRequestHeaders == [.accept: "image/webp"])
        let decoded = try #require(HTTPCacheMetadata(decoding: stored.encoded()))
        #expect(decoded == stored)
        #expect(decoded.matchesVary([.accept: " image/webp "]))
        #expect(!decoded.matchesVary([.accept: "image/png"]))
        #expect(!decoded.matchesVary([.accept: "image/webp", .acceptLanguage: "fr"]))
        #expect(!metadata([.vary: "*"]).matchesVary([:]))
    }

    @Test("entries written by the first version (eight fields, no status) still read, as 200s; the current form is pinned")
    func storedFormIsStable() throws {
        // What the first version wrote for this exchange (at d1b46a9).
        let earlier =
            "494801000000406e55da41000010406e55da4107000400646174651d005468752c203031204a616e20323032362030303a3030"
            + "3a303020474d540c00636f6e74656e742d747970650a00696d6167652f776562700d0063616368652d636f6e74726f6c26006d"
            + "61782d6167653d3630302c207374616c652d7768696c652d726576616c69646174653d36300400657461670400227631220d00"
            + "6c6173742d6d6f6469666965641d005765642c2033312044656320323032352031323a30303a303020474d5404007661727917"
            + "004163636570742c204163636570742d4c616e67756167650d0063616368652d636f6e74726f6c0f006d7573742d726576616c"
            + "6964617465010006006163636570740e00696d6167652f776562702c2a2f2a"
        let decoded = try #require(HTTPCacheMetadata(decoding: Data(Self.bytes(hex: earlier))))
        #expect(decoded.statusCode == 200)
        #expect(decoded.headers.map(\.name.rawName) == ["date", "content-type", "cache-control", "etag", "last-modified", "vary", "cache-control"])
        #expect(decoded.varyingRequestHeaders == [.accept: "image/webp,*/*"])
        #expect(HTTPCacheMetadata(decoding: decoded.encoded()) == decoded, "rewritten in the current form")

        // The current form: magic "IH" 2, the status, the times, the fields.
        let current = HTTPCacheMetadata(
            statusCode: 404, responseHeaders: [.cacheControl: "max-age=60", .xToken: "a"], requestHeaders: [:],
            requestTime: Date(timeIntervalSince1970: 1_767_225_600), responseTime: Date(timeIntervalSince1970: 1_767_225_600.25)
        )
        let pinned =
            "4948029401000000406e55da41000010406e55da4102000d0063616368652d636f6e74726f6c0a006d61782d6167653d363007"
            + "00782d746f6b656e010061" + "0000"
        #expect(Self.hexString(current.encoded()) == pinned)
        #expect(HTTPCacheMetadata(decoding: Data(Self.bytes(hex: pinned))) == current)
    }

    static func hexString(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    static func bytes(hex text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0...($0 + 1)], as: UTF8.self), radix: 16) }
    }

    @Test("storable (RFC 9111 §3): a final status but 206 and 304, with a lifetime to go by; no no-store unless must-understand knows the status")
    func storable() {
        func storable(_ status: Int, _ headers: HTTPFields, request: HTTPFields = [:]) -> Bool {
            HTTPCacheMetadata(
                statusCode: status, responseHeaders: headers, requestHeaders: request, requestTime: Self.rfcExample, responseTime: Self.rfcExample
            )
            .isStorable(requestHeaders: request)
        }
        for status in [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501] {
            #expect(storable(status, [:]), "\(status) is heuristically cacheable")
        }
        for status in [302, 303, 307, 400, 403, 500, 502, 503, 504, 599] {
            #expect(!storable(status, [:]), "\(status) needs explicit freshness")
            #expect(storable(status, [.cacheControl: "max-age=60"]) && storable(status, [.expires: "Thu, 01 Jan 2099 00:00:00 GMT"]))
        }
        #expect(storable(302, [.cacheControl: "private"]) && storable(500, [.cacheControl: "public"]))
        #expect(!storable(206, [.cacheControl: "max-age=60"]) && !storable(304, [.cacheControl: "max-age=60"]))
        #expect(!storable(100, [.cacheControl: "max-age=60"]))
        #expect(!storable(200, [.cacheControl: "max-age=60"], request: [.cacheControl: "no-store"]))
        #expect(!storable(200, [.cacheControl: "max-age=60, No-StOrE"]))
        #expect(!storable(200, [.vary: "Accept, *"]))
        #expect(storable(200, [.cacheControl: "max-age=60, no-store, must-understand"]), "a known status under must-understand")
        #expect(!storable(599, [.cacheControl: "max-age=60, no-store, must-understand"]), "an unknown one is not stored")
        #expect(!storable(599, [.cacheControl: "max-age=60, must-understand"]))
    }

    @Test("the connection's own fields, those Connection names and those no-cache=\"…\" names are not stored")
    func fieldsNotStored() {
        let stored = metadata([
            .connection: "a, B", .keepAlive: "timeout=5", .transferEncoding: "chunked", .te: "trailers", .upgrade: "h2c",
            .proxyAuthenticate: "Basic", .proxyAuthenticationInfo: "x", .proxyAuthorization: "y", .proxyConnection: "close",
            HTTPField.Name("A")!: "1", HTTPField.Name("b")!: "2", HTTPField.Name("c")!: "3",
            .cacheControl: "max-age=60, no-cache=\"Set-Cookie, X-Token\"", .setCookie: "id=1", .xToken: "t", .contentType: "text/plain",
        ])
        #expect(stored.headers.map(\.name.canonicalName) == ["c", "cache-control", "content-type"])
        #expect(stored.freshness(at: Self.rfcExample, maximumHeuristicLifetime: 0).verdict == .fresh, "qualified no-cache is not plain no-cache")
    }

    @Test("a 304 replaces the fields it carries (any field, not Content-Length or Content-Encoding) and the exchange times, and keeps the rest")
    func notModifiedUpdate() {
        let stored = metadata([
            .cacheControl: "max-age=60", .eTag: "\"v1\"", .contentType: "image/png", .contentLength: "10", .xToken: "a", .setCookie: "s=1",
        ])
        let later = Self.rfcExample.addingTimeInterval(500)
        let updated = stored.updated(
            with: [.cacheControl: "max-age=120", .connection: "keep-alive", .xToken: "b", .contentLength: "36", .contentEncoding: "gzip"],
            requestTime: later, responseTime: later
        )
        #expect(updated.headers[values: .cacheControl] == ["max-age=120"])
        #expect(updated.etag == "\"v1\"" && updated.headers[.contentType] == "image/png" && updated.headers[.setCookie] == "s=1")
        #expect(updated.headers[.xToken] == "b" && updated.headers[.contentLength] == "10" && !updated.headers.contains(.contentEncoding))
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
