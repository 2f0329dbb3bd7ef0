import Foundation
import ImagoConcurrency
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("Retries: temporary failures again with backoff and Retry-After, permanent ones never, no URL remembered", .timeLimit(.minutes(10)))
struct RetryTests {
    static let url = URL(string: "http://example.com/a.png")!
    static let quick = RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))

    @Test("the backoff stays under its doubling ceiling, capped, and is spread by jitter")
    func backoff() {
        let policy = RetryPolicy(maximumAttempts: 10, initialDelay: .milliseconds(100), maximumDelay: .seconds(1))
        var generator = SeededGenerator(seed: 3)
        let error = DataLoadingError(.timedOut, url: Self.url)
        for (attempt, ceiling) in [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1000), (9, 1000)] {
            let delays = (0..<500).compactMap { _ in policy.delay(after: error, attempt: attempt, using: &generator) }
            #expect(delays.count == 500)
            #expect(delays.allSatisfy { $0 <= .milliseconds(ceiling) })
            #expect(delays.contains { $0 > .milliseconds(ceiling) / 2 } && delays.contains { $0 < .milliseconds(ceiling) / 2 })
        }
        #expect(policy.delay(after: error, attempt: 10, using: &generator) == nil, "attempts are bounded")
    }

    @Test("only temporary failures are retried; Retry-After is taken as given, up to its maximum")
    func classification() {
        var generator = SeededGenerator(seed: 4)
        let policy = RetryPolicy()
        for status in [408, 429, 500, 502, 503, 504] {
            #expect(policy.delay(after: DataLoadingError(.httpStatus(status), url: Self.url), attempt: 1, using: &generator) != nil)
        }
        for code: DataLoadingError.Code in [
            .httpStatus(404), .httpStatus(403), .httpStatus(501), .invalidURL, .tooManyRedirects, .responseTooLarge(limit: 1), .cancelled,
        ] {
            #expect(policy.delay(after: DataLoadingError(code, url: Self.url), attempt: 1, using: &generator) == nil, "\(code)")
        }
        let asked = DataLoadingError(.httpStatus(503), url: Self.url, retryAfter: .seconds(7))
        #expect(policy.delay(after: asked, attempt: 1, using: &generator) == .seconds(7))
        let tooLong = DataLoadingError(.httpStatus(429), url: Self.url, retryAfter: .seconds(120))
        #expect(policy.delay(after: tooLong, attempt: 1, using: &generator) == nil)
        #expect(RetryPolicy.retryAfter("120") == .seconds(120))
        #expect(RetryPolicy.retryAfter(HTTPDate.format(Date().addingTimeInterval(-60))) == .zero)
        #expect(RetryPolicy.retryAfter("soon") == nil)
    }

    /// A route that fails with `failures` in turn, then serves a PNG.
    func failThenSucceed(_ server: TestImageServer, _ failures: [TestImageServer.Response]) {
        let served = Locked(0)
        let body = VersionedImage.body(version: 1)
        server.setRoute("/flaky.png") { _ in
            let index = served.withLock { count in
                defer { count += 1 }
                return count
            }
            return index < failures.count ? failures[index] : .init(body: body)
        }
    }

    func withPipeline(_ retryPolicy: RetryPolicy = quick, _ body: (TestImageServer, ImagePipeline) async throws -> Void) async throws {
        try await withTestServer(.init(readTimeout: .seconds(60))) { server, loader in
            try await body(server, ImagePipeline(configuration: .init(dataLoader: loader, retryPolicy: retryPolicy)))
        }
    }

    @Test("503, a reset and a truncated body are tried again, and the fourth attempt succeeds")
    func temporaryFailures() async throws {
        try await withPipeline(RetryPolicy(maximumAttempts: 4, initialDelay: .milliseconds(5))) { server, pipeline in
            failThenSucceed(server, [.init(status: 503), .init(behaviour: .reset), .init(body: Data(count: 100), behaviour: .truncate(after: 10))])
            let response = try await pipeline.image(for: server.url("/flaky.png"))
            #expect(response.image.width == 41)
            #expect(server.requestCount("/flaky.png") == 4 && pipeline.statistics.retries == 3)
        }
    }

    @Test("a temporary failure that persists ends after the last attempt with its error")
    func exhausted() async throws {
        try await withPipeline { server, pipeline in
            server.setRoute("/down.png", .init(status: 500))
            let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: server.url("/down.png")) }
            guard case .httpStatus(500, _) = error else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(error?.isTemporary == true)
            #expect(server.requestCount("/down.png") == 3)
        }
    }

    @Test("a 404 is not retried, and the URL is not remembered: once the server has it, it loads")
    func permanentFailure() async throws {
        try await withPipeline { server, pipeline in
            server.setRoute("/later.png", .init(status: 404))
            let error = await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: server.url("/later.png")) }
            #expect(error?.isTemporary == false)
            #expect(server.requestCount("/later.png") == 1)
            server.setRoute("/later.png", .init(body: VersionedImage.body(version: 2)))
            let loaded = try await pipeline.image(for: server.url("/later.png"))
            #expect(loaded.image.width == 42)
        }
    }

    @Test("Retry-After is waited for; one longer than the maximum fails at once")
    func retryAfter() async throws {
        try await withPipeline { server, pipeline in
            failThenSucceed(server, [.init(status: 503, headers: [.retryAfter: "1"])])
            let start = ContinuousClock.now
            _ = try await pipeline.image(for: server.url("/flaky.png"))
            #expect(ContinuousClock.now - start >= .seconds(1), "the server asked for a second")
            #expect(server.requestCount("/flaky.png") == 2)

            server.setRoute("/busy.png", .init(status: 429, headers: [.retryAfter: "3600"]))
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.image(for: server.url("/busy.png")) }
            #expect(server.requestCount("/busy.png") == 1)
        }
    }

    @Test("cancelling during the backoff ends the load with cancelled, and no further attempt is made")
    func cancelDuringBackoff() async throws {
        try await withPipeline(RetryPolicy(maximumAttempts: 3, initialDelay: .seconds(60), maximumDelay: .seconds(60))) { server, pipeline in
            server.setRoute("/down.png", .init(status: 503, headers: [.retryAfter: "20"]))
            let task = pipeline.imageTask(for: ImageRequest(url: server.url("/down.png")))
            await server.waitForRequests("/down.png", count: 1)
            task.cancel()
            let error = await #expect(throws: ImagePipeline.Error.self) { try await task.response }
            #expect(error?.isCancellation == true)
            #expect(server.requestCount("/down.png") == 1)
        }
    }
}
