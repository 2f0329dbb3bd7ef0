import AsyncHTTPClient
import Foundation
import ImagoCaching
import ImagoConcurrency
import NIOCore
import NIOHTTP1

/// Receives one HTTP response for ``HTTPDataLoader`` on the connection's
/// event loop: the head, then every body part appended to one buffer as it
/// arrives. No part waits for another thread (AsyncHTTPClient's async body
/// hands each part to the reading task and stops reading until it asks for
/// the next: two thread hops a part, about 50 parts for a 3 MB image).
///
/// A body announced at 64 KiB or more is copied into memory from the
/// ``BodyBufferPool``, which earlier bodies have already faulted in.
/// A body of unknown length past the spill threshold goes to a
/// ``SpillFile``; then reading waits for each write. Bodies of every status
/// are read, within the same limits.
final class ResponseCollector: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    private struct State {
        var head: HTTPResponseHead?
        /// The URL of the last request sent (after redirects).
        var url: URL
        /// The body arrives inflated: its bytes are not the ones a Range counts.
        var isEncoded = false
        /// The body's length if it arrives as sent (not content-encoded).
        var expected: Int64?
        /// The bytes so far, unless they went to `spill` or `pooled`.
        var data = Data()
        /// Where a body of a known, large size goes instead of `data`.
        var pooled: BodyBufferPool.Buffer?
        var spill: SpillFile?
        var count = 0

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress else { return }
            if let pooled, count + bytes.count <= pooled.capacity {
                (pooled.base + count).copyMemory(from: base, byteCount: bytes.count)
            } else {
                if let pooled {  // more than Content-Length said; the parser should have stopped it
                    data = Data(bytes: pooled.base, count: count)
                    self.pooled = nil
                }
                data.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            }
            count += bytes.count
        }

        /// The bytes held in memory.
        var bytes: Data { pooled?.data(count: count) ?? data }
    }

    private let state: Locked<State>
    private let maximumSize: Int
    private let spillThreshold: Int
    private let temporaryDirectory: String
    /// The threads a spill file is written on.
    private let spillThreads: PriorityThreadPool
    private let progress: @Sendable (DownloadProgress) -> Void

    init(
        url: URL, configuration: HTTPDataLoader.Configuration, spillThreads: PriorityThreadPool,
        progress: @escaping @Sendable (DownloadProgress) -> Void
    ) {
        state = Locked(State(url: url))
        maximumSize = configuration.maximumResponseSize
        spillThreshold = configuration.spillThreshold
        temporaryDirectory = configuration.temporaryDirectory
        self.spillThreads = spillThreads
        self.progress = progress
    }

    // MARK: What arrived

    /// The final response head, once it has arrived.
    var head: HTTPResponseHead? { state.withLock { $0.head } }

    /// The URL the response came from.
    var url: URL { state.withLock { $0.url } }

    /// The response with the whole body, once the request has succeeded.
    func response() throws -> DataLoadingResponse? {
        let received = state.withLock { $0 }
        guard let head = received.head else { return nil }
        if let expected = received.expected, Int64(received.count) != expected {
            throw DataLoadingError(.network, url: received.url, underlying: ShortBody(expected: expected, received: received.count))
        }
        var headers = HTTPFields(head.headers)
        if let coding = headers.first(.contentEncoding)?.lowercased(), coding == "gzip" || coding == "deflate" {
            // Inflated on arrival: these fields described the bytes as sent, not these.
            headers[.contentEncoding] = nil
            headers[.contentLength] = nil
        }
        return DataLoadingResponse(
            data: try received.spill?.mapped(count: received.count) ?? received.bytes,
            statusCode: Int(head.status.code), headers: headers, url: received.url
        )
    }

    /// What arrived of the body before a failure, if it was sent as it is
    /// (not content-encoded); `PartialDownload` continues only a 200's or a 206's.
    var partial: DataLoadingResponse? {
        let received = state.withLock { $0 }
        guard let head = received.head, !received.isEncoded, received.count > 0 else { return nil }
        let data: Data
        if let spill = received.spill {
            guard let mapped = try? spill.mapped(count: received.count) else { return nil }
            data = mapped
        } else {
            data = received.bytes
        }
        return DataLoadingResponse(data: data, statusCode: Int(head.status.code), headers: HTTPFields(head.headers), url: received.url)
    }

    // MARK: HTTPClientResponseDelegate

    func didVisitURL(task: HTTPClient.Task<Void>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        state.withLock { $0.url = request.url }
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let url = state.withLock { state in
            state.head = head
            return state.url
        }
        if head.status == .notModified { return task.eventLoop.makeSucceededVoidFuture() }  // no body by definition
        let contentLength = head.headers.first(name: "Content-Length").flatMap { Int64($0) }
        if let contentLength, contentLength > Int64(maximumSize) {
            return task.eventLoop.makeFailedFuture(DataLoadingError(.responseTooLarge(limit: maximumSize), url: url))
        }
        // Content-Length counts the encoded bytes; the body arrives inflated.
        let isEncoded = head.headers.first(name: "Content-Encoding").map { !$0.isEmpty && $0.lowercased() != "identity" } ?? false
        let expected = isEncoded ? nil : contentLength
        state.withLock { state in
            state.isEncoded = isEncoded
            state.expected = expected
            if let expected, expected >= BodyBufferPool.smallest {
                state.pooled = BodyBufferPool.shared.take(count: Int(expected))
            } else {
                state.data.reserveCapacity(Int(expected ?? 64 << 10))
            }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let size = buffer.readableBytes
        // Appended here unless the body is (or now goes) to a spill file.
        let written = state.withLock { state -> Result<(count: Int, expected: Int64?, spill: SpillFile?)?, DataLoadingError> in
            guard state.count + size <= maximumSize else {
                return .failure(DataLoadingError(.responseTooLarge(limit: maximumSize), url: state.url))
            }
            // A body of unknown length is held in memory up to the spill threshold only.
            guard state.spill == nil, state.expected != nil || state.count + size <= spillThreshold else {
                return .success(nil)
            }
            buffer.withUnsafeReadableBytes { state.append($0) }
            return .success((state.count, state.expected, nil))
        }
        switch written {
        case .failure(let error):
            return task.eventLoop.makeFailedFuture(error)
        case .success(let appended?):
            progress(DownloadProgress(completed: Int64(appended.count), expected: appended.expected))
            return task.eventLoop.makeSucceededVoidFuture()
        case .success(nil):
            return spill(buffer, on: task.eventLoop)
        }
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}

    /// Writes `buffer` to the spill file after what came before, first
    /// creating the file and moving the bytes held in memory to it. The
    /// count grows only once the bytes are written.
    private func spill(_ buffer: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let (file, count, held) = state.withLock { ($0.spill, $0.count, $0.data) }
        let ready =
            file.map { eventLoop.makeSucceededFuture($0) }
            ?? SpillFile.create(in: temporaryDirectory, threads: spillThreads, on: eventLoop).flatMap { file in
                file.write(held, at: 0, on: eventLoop).map { file }
            }
        return ready.flatMap { file in
            file.write(buffer, at: count, on: eventLoop).map { file }
        }.map { [self] file in
            let expected = state.withLock { state in
                state.spill = file
                state.data = Data()
                state.count = count + buffer.readableBytes
                return state.expected
            }
            progress(DownloadProgress(completed: Int64(count + buffer.readableBytes), expected: expected))
        }
    }
}
