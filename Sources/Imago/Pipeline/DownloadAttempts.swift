/// The retry and resume loop of one download as a state machine with no
/// I/O, so that every transition is tested without threads or servers.
/// `ImagePipeline.download` performs what each transition returns: it sends
/// the attempt, keeps or drops the partial body on disk, and waits.
///
/// Every attempt counts, a restart after a 416 included, so a server that
/// answers anything forever ends the loop after `policy.maximumAttempts`.
struct DownloadAttempts {
    /// What the driver does with the kept partial body after a transition.
    enum PartialChange: Equatable {
        case none
        /// Keep these bytes (on disk) for the next attempt.
        case store(PartialDownload)
        /// Drop the kept bytes: they were completed, or cannot be continued.
        case remove
    }

    /// What comes after an attempt.
    enum Next {
        /// The whole body arrived.
        case finish(DataLoadingResponse)
        /// The download failed for good.
        case fail(DataLoadingError)
        /// Try again after this delay (zero for a restart without the kept bytes).
        case retry(after: Duration)
    }

    /// One transition's result.
    struct Step {
        var next: Next
        var partial: PartialChange = .none
    }

    private enum State: Equatable {
        /// Attempt `number` (from 1) is under way.
        case attempting(number: Int)
        case finished
    }

    private let policy: RetryPolicy
    private let resumable: Bool
    private let retriesTemporaryFailures: Bool
    private var state = State.attempting(number: 1)
    /// The bytes the current attempt continues, if any.
    private(set) var partial: PartialDownload?

    /// - Parameters:
    ///   - partial: bytes kept by an earlier download, continued by the first attempt.
    ///   - resumable: whether the bytes of an interrupted body are kept.
    ///   - retriesTemporaryFailures: `false` when a stale copy can stand in
    ///     at once: the first failure ends the loop.
    init(policy: RetryPolicy, partial: PartialDownload?, resumable: Bool, retriesTemporaryFailures: Bool = true) {
        self.policy = policy
        self.partial = resumable ? partial : nil
        self.resumable = resumable
        self.retriesTemporaryFailures = retriesTemporaryFailures
    }

    /// The attempt under way (from 1); `nil` once finished.
    var attempt: Int? {
        if case .attempting(let number) = state { return number }
        return nil
    }

    /// The Range and If-Range fields the current attempt sends.
    var rangeHeaders: HTTPFields { partial?.rangeHeaders ?? [:] }

    /// The attempt's response arrived, whatever its status. A temporary
    /// status (503, say) is retried while attempts remain, then is the
    /// answer; a 206 continues the kept bytes, or is the answer to a Range
    /// the caller asked for itself; a 416 to our own Range starts over.
    /// `generator` draws the backoff's jitter (injected, so that tests choose it).
    mutating func received(_ response: DataLoadingResponse, using generator: inout some RandomNumberGenerator) -> Step {
        let kept = partial
        partial = nil
        let change: PartialChange = kept == nil ? .none : .remove
        if let kept {
            if response.statusCode == 206, let whole = kept.completed(by: response) {
                state = .finished
                return Step(next: .finish(whole), partial: change)
            }
            if response.statusCode == 206 || response.statusCode == 416 {
                let mismatch = DataLoadingError(
                    .network, url: response.url, underlying: MismatchedRange(contentRange: response.headers.first(.contentRange)))
                let next = decide(after: mismatch, restart: response.statusCode == 416, using: &generator).map(Next.retry) ?? .fail(mismatch)
                return Step(next: next, partial: change)
            }
        }
        if DataLoadingError.temporaryStatuses.contains(response.statusCode) {
            let failure = DataLoadingError(
                .httpStatus(response.statusCode), url: response.url,
                retryAfter: response.headers.first(.retryAfter).flatMap(RetryPolicy.retryAfter))
            if let wait = decide(after: failure, restart: false, using: &generator) { return Step(next: .retry(after: wait), partial: change) }
        }
        state = .finished
        return Step(next: .finish(response), partial: change)
    }

    /// The attempt failed.
    mutating func failed(_ error: DataLoadingError, using generator: inout some RandomNumberGenerator) -> Step {
        var change = PartialChange.none
        var restart = false
        if resumable, let kept = PartialDownload(from: error, continuing: partial) {
            partial = kept
            change = .store(kept)
        } else if partial != nil, error.partial != nil || error.code == .httpStatus(416) {
            // The server sent something that does not continue the kept bytes: start over.
            partial = nil
            change = .remove
            restart = error.code == .httpStatus(416)
        }
        return Step(next: decide(after: error, restart: restart, using: &generator).map(Next.retry) ?? .fail(error), partial: change)
    }

    /// How long to wait before the next attempt, while attempts remain: at
    /// once for a restart, after the policy's delay for a temporary
    /// failure; `nil` when the loop is finished.
    private mutating func decide(after error: DataLoadingError, restart: Bool, using generator: inout some RandomNumberGenerator) -> Duration? {
        guard case .attempting(let number) = state else { return nil }
        let wait: Duration?
        if restart {
            wait = number < policy.maximumAttempts ? .zero : nil
        } else if retriesTemporaryFailures {
            wait = policy.delay(after: error, attempt: number, using: &generator)
        } else {
            wait = nil
        }
        guard let wait else {
            state = .finished
            return nil
        }
        state = .attempting(number: number + 1)
        return wait
    }
}

/// A 206 whose Content-Range does not continue the kept bytes exactly.
struct MismatchedRange: Swift.Error, CustomStringConvertible {
    var contentRange: String?

    var description: String { "a partial response (Content-Range \(contentRange ?? "missing")) that does not continue the kept bytes" }
}
