import Foundation

// The network stage of a data fetch: download slots, retries and the
// continuation of interrupted bodies.
extension ImagePipeline {
    /// Loads `dataRequest`, trying temporary failures again as the retry
    /// policy says. Each attempt waits for a download slot of its own; none
    /// is held while backing off. When `resumable`, the bytes of an
    /// interrupted body are kept on disk and the next attempt (here, or in a
    /// later process) asks only for the rest.
    func download(
        _ dataRequest: DataRequest,
        key: String,
        resumable: Bool,
        context: DataContext
    ) async -> Result<DataResponse, Error> {
        var generator = SystemRandomNumberGenerator()
        var partial = resumable ? await storedPartial(forKey: key) : nil
        var attempt = 1
        while true {
            var attemptRequest = dataRequest
            attemptRequest.headers += partial?.rangeHeaders ?? []
            // A continuation reports progress over the whole body, counting the kept bytes.
            let kept = Int64(partial?.data.count ?? 0)
            let progress: @Sendable (DownloadProgress) -> Void = { progress in
                context.reportProgress(DownloadProgress(completed: kept + progress.completed, expected: progress.expected.map { kept + $0 }))
            }
            let outcome = await withDownloadSlot(host: dataRequest.url.host ?? "", context: context) {
                () async -> Result<DataResponse, DataLoadingError> in
                do throws(DataLoadingError) {
                    return .success(try await configuration.dataLoader.loadData(for: attemptRequest, progress: progress))
                } catch {
                    return .failure(error)
                }
            }
            let failure: DataLoadingError
            switch outcome {
            case nil:
                return .failure(.cancelled(key: key))
            case .success(let response)?:
                let whole = response.statusCode == 206 ? partial?.completed(by: response) : response
                if partial != nil {
                    partial = nil
                    await storePartial(nil, forKey: key)
                }
                if let whole { return .success(whole) }
                failure = DataLoadingError(.network, url: dataRequest.url, underlying: MismatchedRange(contentRange: response.header("Content-Range")))
            case .failure(let error)?:
                failure = error
                if resumable, let kept = PartialDownload(from: error, continuing: partial) {
                    partial = kept
                    await storePartial(kept, forKey: key)
                } else if partial != nil, error.partial != nil || error.code == .httpStatus(416) {
                    // The server sent something that does not continue the kept bytes: start over.
                    partial = nil
                    await storePartial(nil, forKey: key)
                    if error.code == .httpStatus(416) { continue }
                }
            }
            guard let delay = configuration.retryPolicy.delay(after: failure, attempt: attempt, using: &generator) else {
                return .failure(Error(failure, key: key))
            }
            logger.debug("retrying a download", metadata: ["key": "\(key)", "attempt": "\(attempt)", "error": "\(failure)"])
            metrics.retried()
            do { try await Task.sleep(for: delay) } catch { return .failure(.cancelled(key: key)) }
            attempt += 1
        }
    }

    /// Runs `load` once a download slot for `host` is free, at the fetch's
    /// priority; `nil` if the fetch was cancelled while queued.
    func withDownloadSlot<Value>(host: String, context: DataContext, _ load: () async -> Value) async -> Value? {
        let ticket = downloadLimiter.enqueue(key: host, priority: context.priority)
        context.observePriority { [downloadLimiter] in downloadLimiter.setPriority($0, for: ticket) }
        guard await downloadLimiter.wait(ticket) else { return nil }
        defer { downloadLimiter.release(ticket) }
        return await load()
    }
}

/// A 206 whose Content-Range does not continue the kept bytes exactly.
struct MismatchedRange: Swift.Error, CustomStringConvertible {
    var contentRange: String?

    var description: String { "a partial response (Content-Range \(contentRange ?? "missing")) that does not continue the kept bytes" }
}
