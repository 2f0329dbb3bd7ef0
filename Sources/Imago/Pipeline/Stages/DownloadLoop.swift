import Foundation
import ImagoConcurrency

/// A data fetch's download: attempt after attempt as ``DownloadAttempts``
/// decides (retries of temporary failures after a backoff, the rest of an
/// interrupted body asked for with Range), each attempt in a download slot
/// of its own; none is held while backing off. When `resumable`, the bytes
/// of an interrupted body are kept on disk, and the next attempt (here, or
/// in a later process) asks only for the rest. Without `retries`, the first
/// failure is final (a stale copy stands in at once).
struct DownloadLoop {
    let pipeline: ImagePipeline
    let key: String
    let context: DataFetches.Context
    let slot: DownloadSlot
    let resumable: Bool
    let retries: Bool

    func run(_ dataRequest: DataRequest) async -> Result<DataLoadingResponse, ImagePipeline.Error> {
        var generator = SystemRandomNumberGenerator()
        let kept = resumable ? await pipeline.storedPartial(forKey: key) : nil
        var attempts = DownloadAttempts(
            policy: pipeline.configuration.retryPolicy, partial: kept, resumable: resumable, retriesTemporaryFailures: retries)
        while true {
            var attemptRequest = dataRequest
            attemptRequest.headers += attempts.rangeHeaders
            // A continuation reports progress over the whole body, counting the kept bytes.
            let keptCount = Int64(attempts.partial?.data.count ?? 0)
            let progress: @Sendable (DownloadProgress) -> Void = { [context] progress in
                context.reportProgress(
                    DownloadProgress(completed: keptCount + progress.completed, expected: progress.expected.map { keptCount + $0 }))
            }
            let outcome = await slot.withTurn(host: dataRequest.url.host ?? "") { () async -> Result<DataLoadingResponse, DataLoadingError> in
                do throws(DataLoadingError) {
                    return .success(try await pipeline.configuration.dataLoader.loadData(for: attemptRequest, progress: progress))
                } catch {
                    return .failure(error)
                }
            }
            let step: DownloadAttempts.Step
            switch outcome {
            case nil: return .failure(.cancelled(key: key))
            case .success(let response)?: step = attempts.received(response, using: &generator)
            case .failure(let error)?: step = attempts.failed(error, using: &generator)
            }
            switch step.partial {
            case .none: break
            case .store(let partial): await pipeline.storePartial(partial, forKey: key)
            case .remove: await pipeline.storePartial(nil, forKey: key)
            }
            switch step.next {
            case .finish(let response):
                return .success(response)
            case .fail(let error):
                return .failure(ImagePipeline.Error(error, key: key))
            case .retry(let delay):
                pipeline.logger.debug("retrying a download", metadata: ["key": "\(key)", "next attempt": "\(attempts.attempt ?? 0)"])
                pipeline.metrics.retried()
                do { try await Task.sleep(for: delay) } catch { return .failure(.cancelled(key: key)) }
            }
        }
    }
}

/// The download slot a data fetch waits for, attempt after attempt. It
/// follows the fetch's priority with one observer for the fetch's whole
/// life, and passes a change to the ticket queued now, not to earlier ones.
final class DownloadSlot: Sendable {
    typealias Priority = ImageRequest.Priority

    private struct State {
        var priority: Priority = .normal
        var ticket: WeightedSemaphore.Ticket?
    }

    private let limiter: WeightedSemaphore
    private let state = Locked(State())

    init(context: DataFetches.Context, limiter: WeightedSemaphore) {
        self.limiter = limiter
        context.observePriority { [state] priority in
            state.withLock { state in
                state.priority = priority
                if let ticket = state.ticket { limiter.setPriority(priority, for: ticket) }
            }
        }
    }

    /// Runs `load` once a slot for `host` is free, at the fetch's priority;
    /// `nil` if the fetch was cancelled while queued.
    func withTurn<Value>(host: String, _ load: () async -> Value) async -> Value? {
        let ticket = enqueue(key: host)
        guard await limiter.wait(ticket) else { return nil }
        defer { limiter.release(ticket) }
        return await load()
    }

    /// Joins the limiter's queue at the fetch's priority; the new ticket replaces the last one.
    private func enqueue(key: String) -> WeightedSemaphore.Ticket {
        state.withLock { state in
            let ticket = limiter.enqueue(key: key, priority: state.priority)
            state.ticket = ticket
            return ticket
        }
    }
}
