import Crypto
import Foundation
import Imago
import ImagoCaching
import ImagoConcurrency
import Logging
import Tracing

/// Encoded answers kept in object storage too, where every instance sees
/// them: an instance that has not made an answer asks the store before it
/// transforms (one GET, no decode), so a new or restarted instance starts
/// warm and a cluster transforms each variant once. Writes go out after
/// the answer, never delaying it. A store that fails is skipped for a
/// while (a log line and a metric each time), and the instance caches
/// locally meanwhile: an outage costs transformations, never errors.
final class SharedResultStore: Sendable {
    /// `s3://bucket/prefix/`: each answer is an object under it, named by
    /// the SHA-256 of its source, a slash, and the SHA-256 of its result
    /// key, so that a source's answers are listed (and purged) together.
    let location: URL
    private let loader: ObjectStorageLoader
    private let metrics: ServiceMetrics
    private let logger: Logger
    /// Until when the store is skipped, after a failure.
    private let skippedUntil = Locked<ContinuousClock.Instant?>(nil)
    /// Held by every write not yet done, for ``waitForWrites()``.
    private let writes = PendingWork()
    /// How long a failed store is left alone.
    static let pause: Duration = .seconds(10)
    /// How long one request may take.
    private let timeout: Duration

    init(location: URL, storage: ObjectStorage, timeout: Duration, metrics: ServiceMetrics, logger: Logger) {
        self.location = location
        self.timeout = timeout
        self.metrics = metrics
        self.logger = logger
        let http = HTTPDataLoader(
            configuration: .init(connectTimeout: timeout, requestTimeout: timeout, maximumRedirects: 0, userAgent: "Imago"))
        loader = ObjectStorageLoader(settings: storage, http: http)
    }

    /// The answer the store holds for `key`, if it is there and fresh; nil
    /// on a miss, and on a failure.
    func fetch(_ key: ResultKey) async -> EncodedResult? {
        guard isAvailable else { return nil }
        let url = objectURL(key)
        do {
            let response = try await loader.load(DataRequest(url: url), progress: { _ in })
            guard response.statusCode == 200 else {
                if response.statusCode != 404 { failed("GET \(url.absoluteString): status \(response.statusCode)") }
                return nil
            }
            guard let result = Self.decode(response.data), ContinuousClock.now < result.expires else { return nil }
            metrics.resultStoreHit()
            return result
        } catch {
            failed("GET \(url.absoluteString): \(error)")
            return nil
        }
    }

    /// Writes `result` for `key`, after this returns.
    func put(_ result: EncodedResult, forKey key: ResultKey) {
        guard isAvailable else { return }
        let url = objectURL(key)
        let body = Self.encode(result)
        writes.enter()
        let trace = ServiceContext.current
        Task.detached { [self] in
            defer { writes.leave() }
            let written = await TraceSpans.within(trace) { try await loader.put(body, to: url, timeout: timeout) }
            if case .failure(let error) = written { failed("PUT \(url.absoluteString): \(error)") }
        }
    }

    /// Waits until the writes started so far are done (tests, shutdown).
    func waitForWrites() async {
        await writes.idle()
    }

    private var isAvailable: Bool {
        skippedUntil.withLock { until in
            guard let skipped = until else { return true }
            guard ContinuousClock.now >= skipped else { return false }
            until = nil
            return true
        }
    }

    private func failed(_ what: String) {
        metrics.resultStoreError()
        skippedUntil.withLock { $0 = ContinuousClock.now + Self.pause }
        logger.warning("result store failed; skipped for \(Self.pause)", metadata: ["store": "\(location.absoluteString)", "error": "\(what)"])
    }

    /// Removes every answer made from `source` (its URL's absolute string)
    /// from the store; returns how many there were (0 when the store fails).
    func purge(source: String) async -> Int {
        guard let bucket = location.host else { return 0 }
        let prefix = keyPrefix + Self.digest(source) + "/"
        do {
            let keys = try await loader.list(bucket: bucket, prefix: prefix, timeout: timeout)
            for key in keys {
                guard let url = URL(string: "s3://\(bucket)/" + key) else { continue }
                try await loader.delete(url, timeout: timeout)
            }
            return keys.count
        } catch {
            failed("purge \(source): \(error)")
            return 0
        }
    }

    /// The object keys' common start: the location's path, without its leading slash.
    private var keyPrefix: String {
        let path = location.path(percentEncoded: false).drop { $0 == "/" }
        return path.isEmpty || path.hasSuffix("/") ? String(path) : path + "/"
    }

    private func objectURL(_ key: ResultKey) -> URL {
        let name = keyPrefix + Self.digest(key.source) + "/" + Self.digest(key.diskKey)
        return URL(string: "s3://\(location.host ?? "")/" + name) ?? location
    }

    private static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// The metadata's length (4 bytes, big-endian), the metadata as the
    /// disk tier writes it, then the bytes.
    static func encode(_ result: EncodedResult) -> Data {
        let metadata = result.storedMetadata
        var body = Data(capacity: 4 + metadata.count + result.bytes.readableBytes)
        withUnsafeBytes(of: UInt32(metadata.count).bigEndian) { body.append(contentsOf: $0) }
        body.append(metadata)
        body.append(contentsOf: result.bytes.readableBytesView)
        return body
    }

    static func decode(_ body: Data) -> EncodedResult? {
        guard body.count >= 4 else { return nil }
        let length = body.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard body.count >= 4 + length else { return nil }
        let start = body.startIndex + 4
        return EncodedResult(CachedData(data: Data(body[(start + length)...]), metadata: Data(body[start..<(start + length)])))
    }
}
