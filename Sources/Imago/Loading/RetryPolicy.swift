/// When a failed download is tried again: only temporary failures
/// (``DataLoadingError/isTemporary``), a bounded number of times, after an
/// exponential backoff with full jitter, or after the server's Retry-After.
///
/// ```swift
/// var configuration = ImagePipeline.Configuration()
/// configuration.retryPolicy = RetryPolicy(maximumAttempts: 5, initialDelay: .milliseconds(100))
/// ```
///
/// Attempt *n* (counting from 1) that fails waits a random time between zero
/// and `min(maximumDelay, initialDelay × 2^(n-1))` before the next, so that
/// many clients failing together do not return together. A Retry-After
/// longer than ``maximumRetryAfter`` ends the load at once rather than keep
/// a caller waiting.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included. 1 means no retries. Default: 3.
    public var maximumAttempts: Int
    /// The backoff ceiling after the first failure. Default: 250 ms.
    public var initialDelay: Duration
    /// The largest backoff ceiling. Default: 8 s.
    public var maximumDelay: Duration
    /// The longest Retry-After the pipeline waits for. Default: 30 s.
    public var maximumRetryAfter: Duration

    /// Creates a policy.
    public init(
        maximumAttempts: Int = 3,
        initialDelay: Duration = .milliseconds(250),
        maximumDelay: Duration = .seconds(8),
        maximumRetryAfter: Duration = .seconds(30)
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// Never retry.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// How long to wait after attempt `attempt` (from 1) failed with `error`
    /// before trying again; `nil` to give up.
    func delay(after error: DataLoadingError, attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration? {
        guard error.isTemporary, attempt < maximumAttempts else { return nil }
        if let retryAfter = error.retryAfter {
            return retryAfter <= maximumRetryAfter ? retryAfter : nil
        }
        let ceiling = min(maximumDelay, initialDelay * (1 << min(attempt - 1, 30)))
        return .nanoseconds(Int64.random(in: 0...max(0, ceiling.nanoseconds), using: &generator))
    }

    /// A Retry-After value (RFC 9110 §10.2.3): delay-seconds or an HTTP date.
    static func retryAfter(_ value: String) -> Duration? {
        let text = value.trimmingASCIISpaces()
        if let seconds = Int(text) { return .seconds(max(0, min(seconds, 1 << 31))) }
        guard let date = HTTPDate.parse(String(text)) else { return nil }
        return .milliseconds(max(0, Int(min(date.timeIntervalSinceNow, Double(1 << 31)) * 1000)))
    }
}
