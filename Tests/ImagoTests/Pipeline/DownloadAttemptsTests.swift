import Foundation
import ImagoSandbox
import Testing

@testable import Imago

/// The download loop's transitions, without threads, servers or disks.
@Suite("DownloadAttempts: retry and resume as a state machine")
struct DownloadAttemptsTests {
    let url = URL(string: "https://images.example/big.jpg")!
    let policy = RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(100))
    var generator = SeededGenerator(seed: 7)

    func response(_ status: Int, _ count: Int = 10, headers: HTTPFields = [:]) -> DataLoadingResponse {
        DataLoadingResponse(data: Data(repeating: 1, count: count), statusCode: status, headers: headers, url: url)
    }

    /// A network failure after `count` bytes of a 200 whose ETag lets it be continued.
    func interrupted(after count: Int) -> DataLoadingError {
        var error = DataLoadingError(.network, url: url)
        error.partial = response(200, count, headers: [.eTag: "\"v1\""])
        return error
    }

    @Test("a 200 on the first attempt finishes with no partial body to touch")
    mutating func firstAttemptSucceeds() throws {
        var attempts = DownloadAttempts(policy: policy, partial: nil, resumable: true)
        #expect(attempts.attempt == 1 && attempts.rangeHeaders.isEmpty)
        let step = attempts.received(response(200), using: &generator)
        guard case .finish(let whole) = step.next else { throw Unexpected(step) }
        #expect(whole.statusCode == 200 && step.partial == .none && attempts.attempt == nil)
    }

    @Test("temporary failures are retried after the policy's backoff, then fail with the last error")
    mutating func temporaryFailuresAreBounded() throws {
        var attempts = DownloadAttempts(policy: policy, partial: nil, resumable: true)
        for attempt in 1...2 {
            let step = attempts.failed(DataLoadingError(.httpStatus(503), url: url), using: &generator)
            guard case .retry(let delay) = step.next else { throw Unexpected(step) }
            #expect(delay <= .milliseconds(100) * (1 << (attempt - 1)))
            #expect(attempts.attempt == attempt + 1)
        }
        let last = attempts.failed(DataLoadingError(.httpStatus(503), url: url), using: &generator)
        guard case .fail(let error) = last.next else { throw Unexpected(last) }
        #expect(error.code == .httpStatus(503) && attempts.attempt == nil)
    }

    @Test("a temporary status that arrives as a response is retried (after its Retry-After), then is the answer as it came")
    mutating func temporaryStatusResponses() throws {
        var attempts = DownloadAttempts(policy: policy, partial: nil, resumable: true)
        let first = attempts.received(response(503, headers: [.retryAfter: "2"]), using: &generator)
        guard case .retry(let delay) = first.next else { throw Unexpected(first) }
        #expect(delay == .seconds(2))
        _ = attempts.received(response(503), using: &generator)
        let last = attempts.received(response(503, 7), using: &generator)
        guard case .finish(let answer) = last.next else { throw Unexpected(last) }
        #expect(answer.statusCode == 503 && answer.data.count == 7 && attempts.attempt == nil)

        var final = DownloadAttempts(policy: policy, partial: nil, resumable: true)
        let notFound = final.received(response(404), using: &generator)
        guard case .finish(let page) = notFound.next else { throw Unexpected(notFound) }
        #expect(page.statusCode == 404, "a status that would come again is the answer at once")
    }

    @Test("a 206 with no kept bytes answers the caller's own Range as it came; a 416 response to our own Range restarts at once")
    mutating func rangesAsResponses() throws {
        var attempts = DownloadAttempts(policy: policy, partial: nil, resumable: false)
        let part = attempts.received(response(206, 4, headers: [.contentRange: "bytes 2-5/16"]), using: &generator)
        guard case .finish(let answer) = part.next else { throw Unexpected(part) }
        #expect(answer.statusCode == 206 && part.partial == .none)

        let kept = PartialDownload(data: Data(count: PartialDownload.minimumCount), validator: "\"v1\"")
        var resumed = DownloadAttempts(policy: policy, partial: kept, resumable: true)
        let refused = resumed.received(response(416, 0), using: &generator)
        guard case .retry(let delay) = refused.next else { throw Unexpected(refused) }
        #expect(delay == .zero && refused.partial == .remove && resumed.rangeHeaders.isEmpty)
    }

    @Test("a failure that would fail again (404) is final at once")
    mutating func permanentFailure() throws {
        var attempts = DownloadAttempts(policy: policy, partial: nil, resumable: true)
        let step = attempts.failed(DataLoadingError(.httpStatus(404), url: url), using: &generator)
        guard case .fail(let error) = step.next else { throw Unexpected(step) }
        #expect(error.code == .httpStatus(404))
    }

    @Test("with a stale copy to stand in, the first temporary failure is final")
    mutating func noRetriesWhenStaleServes() throws {
        var attempts = DownloadAttempts(policy: policy, partial: nil, resumable: false, retriesTemporaryFailures: false)
        let step = attempts.failed(DataLoadingError(.network, url: url), using: &generator)
        guard case .fail(let error) = step.next else { throw Unexpected(step) }
        #expect(error.code == .network)
    }

    @Test("an interrupted body is kept, continued with Range and If-Range, and dropped once complete")
    mutating func resumesInterruptedBody() throws {
        var attempts = DownloadAttempts(policy: policy, partial: nil, resumable: true)
        let count = PartialDownload.minimumCount
        let step = attempts.failed(interrupted(after: count), using: &generator)
        guard case .retry = step.next, case .store(let kept) = step.partial else { throw Unexpected(step) }
        #expect(kept.data.count == count)
        #expect(attempts.rangeHeaders.contains(HTTPField(name: .range, value: "bytes=\(count)-")))
        #expect(attempts.rangeHeaders.contains(HTTPField(name: .ifRange, value: "\"v1\"")))

        let rest = response(206, 100, headers: [.contentRange: "bytes \(count)-\(count + 99)/\(count + 100)"])
        let done = attempts.received(rest, using: &generator)
        guard case .finish(let whole) = done.next else { throw Unexpected(done) }
        #expect(whole.statusCode == 200 && whole.data.count == count + 100 && done.partial == .remove)
    }

    @Test("a 206 that does not continue the kept bytes drops them and counts as a failed attempt")
    mutating func mismatchedRange() throws {
        let kept = PartialDownload(data: Data(count: PartialDownload.minimumCount), validator: "\"v1\"")
        var attempts = DownloadAttempts(policy: policy, partial: kept, resumable: true)
        let step = attempts.received(response(206, 10, headers: [.contentRange: "bytes 0-9/10"]), using: &generator)
        guard case .retry = step.next else { throw Unexpected(step) }
        #expect(step.partial == .remove && attempts.rangeHeaders.isEmpty && attempts.attempt == 2)
    }

    @Test("a server that answers 416 forever ends within the policy's attempts with a typed error")
    mutating func rangeNotSatisfiableForever() throws {
        // Given kept bytes, and a server that keeps interrupting the body and refusing every range
        let kept = PartialDownload(data: Data(count: PartialDownload.minimumCount), validator: "\"v1\"")
        var attempts = DownloadAttempts(policy: policy, partial: kept, resumable: true)
        var sent = 0
        var outcome: DataLoadingError?
        while outcome == nil, sent < 100 {
            sent += 1
            // A request with a Range is refused; one without is cut off after enough bytes to keep.
            let error =
                attempts.rangeHeaders.isEmpty
                ? interrupted(after: PartialDownload.minimumCount)
                : DataLoadingError(.httpStatus(416), url: url)
            let step = attempts.failed(error, using: &generator)
            if case .fail(let final) = step.next { outcome = final }
        }
        // Then the loop ends after the policy's attempts, restarts included
        #expect(sent == policy.maximumAttempts)
        #expect(outcome != nil)
    }

    @Test("a 416 restart happens at once, and not when no attempt is left")
    mutating func restartIsImmediate() throws {
        let kept = PartialDownload(data: Data(count: PartialDownload.minimumCount), validator: "\"v1\"")
        var attempts = DownloadAttempts(policy: policy, partial: kept, resumable: true)
        let step = attempts.failed(DataLoadingError(.httpStatus(416), url: url), using: &generator)
        guard case .retry(let delay) = step.next else { throw Unexpected(step) }
        #expect(delay == .zero && step.partial == .remove && attempts.rangeHeaders.isEmpty)

        var single = DownloadAttempts(policy: .none, partial: kept, resumable: true)
        let last = single.failed(DataLoadingError(.httpStatus(416), url: url), using: &generator)
        guard case .fail(let error) = last.next else { throw Unexpected(last) }
        #expect(error.code == .httpStatus(416) && last.partial == .remove)
    }

    @Test("not resumable: kept bytes are ignored and nothing is stored")
    mutating func notResumable() throws {
        let kept = PartialDownload(data: Data(count: PartialDownload.minimumCount), validator: "\"v1\"")
        var attempts = DownloadAttempts(policy: policy, partial: kept, resumable: false)
        #expect(attempts.rangeHeaders.isEmpty)
        let step = attempts.failed(interrupted(after: PartialDownload.minimumCount), using: &generator)
        guard case .retry = step.next else { throw Unexpected(step) }
        #expect(step.partial == .none)
    }
}

/// A step a test did not expect, described.
private struct Unexpected: Error, CustomStringConvertible {
    let description: String
    init(_ step: DownloadAttempts.Step) { description = "unexpected step: \(step)" }
}
