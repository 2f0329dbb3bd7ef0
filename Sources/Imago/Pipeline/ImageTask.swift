import Foundation
import ImagoConcurrency

/// One running image load: cancel it, change its priority, follow its
/// progress, await its result.
///
/// ```swift
/// let task = pipeline.imageTask(for: request)
/// task.priority = .veryHigh          // it scrolled into view
/// for await progress in task.progress { print(progress.fraction ?? 0) }
/// let response = try await task.response
/// ```
///
/// A task completes exactly once: with a response, an error, or
/// ``ImagePipeline/Error/cancelled(key:)``.
public final class ImageTask: Sendable, Hashable {
    /// How urgent a task is: the request's priority type.
    public typealias Priority = ImageRequest.Priority
    typealias Outcome = Result<ImageResponse, ImagePipeline.Error>

    /// A number unique within the process.
    public let id: UInt64
    /// The request the task loads.
    public let request: ImageRequest
    /// Bytes received and expected, as the download goes, from the moment
    /// it is first read; ends when the task ends. It keeps only the newest
    /// value for a slow reader. Made on first use: a task nobody follows
    /// reports nothing.
    public var progress: AsyncStream<DownloadProgress> {
        state.withLock { state in
            if let stream = state.progressStream { return stream }
            let (stream, continuation) = AsyncStream.makeStream(of: DownloadProgress.self, bufferingPolicy: .bufferingNewest(1))
            state.progressStream = stream
            // A fresh stream has no reader yet: finishing it under the lock wakes nobody.
            if state.outcome == nil { state.progressContinuation = continuation } else { continuation.finish() }
            return stream
        }
    }

    private struct State {
        var progressStream: AsyncStream<DownloadProgress>?
        var progressContinuation: AsyncStream<DownloadProgress>.Continuation?
        var priority: Priority
        var subscription: ImageFetches.Subscription?
        var outcome: Outcome?
        var waiters: [CheckedContinuation<Outcome, Never>] = []
        var onFinish: (@Sendable (ImageTask, Outcome) -> Void)?
    }

    private let state: Locked<State>

    init(id: UInt64, request: ImageRequest, onFinish: @escaping @Sendable (ImageTask, Outcome) -> Void) {
        self.id = id
        self.request = request
        state = Locked(State(priority: request.priority, onFinish: onFinish))
    }

    /// How urgent the task is. Changing it reorders queued downloads and
    /// decodes; shared work runs at its most urgent waiter's priority.
    public var priority: Priority {
        get { state.withLock { $0.priority } }
        set {
            let subscription = state.withLock { state -> ImageFetches.Subscription? in
                guard state.outcome == nil, state.priority != newValue else { return nil }
                state.priority = newValue
                return state.subscription
            }
            subscription?.setPriority(newValue)
        }
    }

    /// Cancels the task: it completes with ``ImagePipeline/Error/cancelled(key:)``
    /// at once. Work shared with other tasks goes on for them.
    public func cancel() {
        guard finish(.failure(.cancelled(key: request.cacheKey))) else { return }
        state.withLock { $0.subscription }?.cancel()
    }

    /// Whether the task has completed (successfully, with an error, or cancelled).
    public var isFinished: Bool { state.withLock { $0.outcome != nil } }

    /// The response, once the task completes. Cancelling the awaiting task
    /// cancels this image task.
    public var response: ImageResponse {
        get async throws(ImagePipeline.Error) { try await result.get() }
    }

    /// The outcome, once the task completes. Cancelling the awaiting task
    /// cancels this image task.
    public var result: Result<ImageResponse, ImagePipeline.Error> {
        get async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let outcome: Outcome? = state.withLock { state in
                        if let outcome = state.outcome { return outcome }
                        state.waiters.append(continuation)
                        return nil
                    }
                    if let outcome { continuation.resume(returning: outcome) }
                }
            } onCancel: {
                cancel()
            }
        }
    }

    /// Attaches the shared work; cancels it at once if the task already ended.
    func attach(_ subscription: ImageFetches.Subscription) {
        let alreadyFinished = state.withLock { state in
            state.subscription = subscription
            return state.outcome != nil
        }
        if alreadyFinished { subscription.cancel() }
    }

    /// Completes the task with its shared fetch's outcome, timed from `start`.
    func complete(_ outcome: Result<FetchedImage, ImagePipeline.Error>, startedAt start: ContinuousClock.Instant) {
        finish(
            outcome.map { fetched in
                var timings = fetched.timings
                timings.total = ContinuousClock.now - start
                return ImageResponse(
                    image: fetched.image, request: request, source: fetched.source, freshness: fetched.freshness, dataCount: fetched.dataCount,
                    timings: timings
                )
            })
    }

    @Sendable func reportProgress(_ progress: DownloadProgress) {
        state.withLock { $0.progressContinuation }?.yield(progress)
    }

    /// Completes the task; only the first completion counts.
    @discardableResult
    func finish(_ outcome: Outcome) -> Bool {
        typealias Taken = (
            [CheckedContinuation<Outcome, Never>], (@Sendable (ImageTask, Outcome) -> Void)?, AsyncStream<DownloadProgress>.Continuation?
        )
        let taken = state.withLock { state -> Taken? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer {
                state.waiters = []
                state.onFinish = nil
                state.progressContinuation = nil
            }
            return (state.waiters, state.onFinish, state.progressContinuation)
        }
        guard let (waiters, onFinish, progressContinuation) = taken else { return false }
        progressContinuation?.finish()
        onFinish?(self, outcome)
        for waiter in waiters { waiter.resume(returning: outcome) }
        return true
    }

    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// The answer to ``ImagePipeline/loadImage(_:)``: a memory hit to show in
/// this frame, or a task to wait for.
public enum LoadingImage: Sendable {
    /// The image was in memory; nothing was started.
    case cached(ImageResponse)
    /// The image is being loaded.
    case inProgress(ImageTask)
}

/// What a shared image fetch produces, before it is tied to one request.
struct FetchedImage: Sendable {
    var image: Image
    var source: ImageResponse.Source
    var freshness: ImageResponse.Freshness = .fresh
    var dataCount: Int?
    var timings: ImageResponse.Timings
}
