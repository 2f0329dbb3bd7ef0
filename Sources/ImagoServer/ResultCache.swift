import Dispatch
import Foundation
import Imago
import ImagoCaching
import NIOCore

/// One encoded answer, as it is sent, and what it was made from.
struct EncodedResult: Sendable {
    /// The bytes, in the buffer every response sends: answers share it
    /// rather than each copying it (a client that pipelines requests and
    /// does not read would otherwise hold a copy per request).
    var bytes: ByteBuffer
    var mediaType: String
    /// Strong: a 128-bit hash of the bytes (XXH64 under two seeds), which
    /// the source's content, the options and the format all determine. Not
    /// SHA-256, which cost 0.3% of a thumbnail: an ETag only tells one
    /// URL's versions apart, and whoever could make two of them collide
    /// controls the source anyway.
    var etag: String
    /// The source's validator (its ETag, else Last-Modified, else a hash of
    /// its bytes): a source that comes back with the same one needs no new
    /// transformation.
    var sourceValidator: String
    /// The source's Last-Modified, passed on.
    var lastModified: String?
    /// The answer's max-age: the configured one, or less if the source is
    /// fresh for less.
    var maxAge: Int
    /// When the source must be asked again (under its HTTP rules).
    var expires: ContinuousClock.Instant

    init(data: Data, mediaType: String, sourceValidator: String, lastModified: String?, maxAge: Int, lifetime: Duration) {
        bytes = ByteBuffer(bytes: data)
        self.mediaType = mediaType
        etag = data.withUnsafeBytes { bytes in
            "\"" + Checksum.hash(bytes, seed: 0).hexadecimal(digits: 16) + Checksum.hash(bytes, seed: 1).hexadecimal(digits: 16) + "\""
        }
        self.sourceValidator = sourceValidator
        self.lastModified = lastModified
        self.maxAge = maxAge
        expires = .now + lifetime
    }

    /// The same answer, confirmed for another `lifetime` and `maxAge`.
    func renewed(maxAge: Int, lifetime: Duration) -> EncodedResult {
        var copy = self
        copy.maxAge = maxAge
        copy.expires = .now + lifetime
        return copy
    }
}

/// Encoded answers by source, normalised options and output format (never
/// by signature, so differently signed URLs for the same variant share
/// one), kept in memory and, where a folder is given, on disk (so a
/// restarted server keeps them), with identical requests in flight made
/// once: the first starts the work, the others wait for its result, and
/// the work is cancelled when every request waiting for it is.
///
/// With a disk tier, a new answer goes to disk only, and into memory when
/// it is asked for again: answers asked for once (a crawler, a cold start,
/// the long tail) neither take memory nor push out the ones in demand.
final class ResultCache: Sendable {
    /// Work in flight for one key, and how many requests wait for it.
    private struct Shared {
        var task: Task<EncodedResult, any Error>
        var waiters: Int
    }

    private let cache: MemoryCache<String, EncodedResult>
    private let disk: DiskCache?
    private let inFlight = Locked<[String: Shared]>([:])
    let lifetime: Duration

    init(costLimit: Int, lifetime: Duration, disk: DiskCache?) {
        cache = MemoryCache(configuration: .init(costLimit: costLimit))
        self.disk = disk
        self.lifetime = lifetime
    }

    static func key(source: URL, options: ProcessingOptions, format: OutputFormat) -> String {
        source.absoluteString + "\u{0}" + options.cacheKey + "\u{0}" + format.rawValue
    }

    /// The answer kept for `key`, expired or not: from memory, else from disk.
    func cached(_ key: String) async -> EncodedResult? {
        if let result = cache.value(forKey: key) { return result }
        guard let disk, disk.mayContainData(forKey: key) else { return nil }
        let stored = await Self.onDiskThread { disk.cachedData(forKey: key) }
        guard let stored, let result = EncodedResult(stored) else { return nil }
        cache.set(result, forKey: key, cost: result.bytes.readableBytes)
        return result
    }

    /// Closes the disk tier, saving its index snapshot.
    func close() { disk?.close() }

    /// Keeps `result` for `key`: on disk, and in memory when there is no
    /// disk tier or an older answer is there. Blocks on file I/O: call it
    /// off Swift's cooperative threads.
    func store(_ result: EncodedResult, forKey key: String) {
        if disk == nil || cache.value(forKey: key) != nil {
            cache.set(result, forKey: key, cost: result.bytes.readableBytes)
        }
        // A failed store (a full disk) only costs a later transformation.
        try? disk?.storeData(Data(result.bytes.readableBytesView), metadata: result.storedMetadata, forKey: key)
    }

    /// The answer for `key`: joins the work in flight for it, or starts
    /// `make`, which keeps what it returns (``store(_:forKey:)``). A
    /// cancelled request leaves the work; the last one to leave cancels it.
    func result(for key: String, make: @escaping @Sendable () async throws(ServiceError) -> EncodedResult) async throws(ServiceError) -> EncodedResult {
        let task = inFlight.withLock { tasks in
            if let shared = tasks[key] {
                tasks[key]?.waiters += 1
                return shared.task
            }
            let task = Task<EncodedResult, any Error> {
                try await make()
            }
            tasks[key] = Shared(task: task, waiters: 1)
            return task
        }
        let hasLeft = Locked(false)
        let leave: @Sendable () -> Void = { [inFlight] in
            guard hasLeft.withLock({ left in defer { left = true }; return !left }) else { return }
            let wasLast = inFlight.withLock { tasks in
                guard let shared = tasks[key], shared.task == task else { return false }
                if shared.waiters > 1 {
                    tasks[key]?.waiters -= 1
                    return false
                }
                tasks[key] = nil
                return true
            }
            // Outside the lock: cancelling runs the work's cancellation handlers.
            if wasLast { task.cancel() }
        }
        // A cancelled waiter of work that others still wait for gets its
        // result when that work ends; the last one cancels it.
        let outcome = await withTaskCancellationHandler { await task.result } onCancel: { leave() }
        leave()
        switch outcome {
        case .success(let result): return result
        case .failure(let error as ServiceError): throw error
        case .failure: throw ServiceError(status: 503, message: "the request was cancelled")
        }
    }

    var count: Int { cache.totalCount }

    /// Runs blocking file I/O off Swift's cooperative threads.
    static func onDiskThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: body()) }
        }
    }
}

extension EncodedResult {
    /// What is stored beside the bytes on disk: a version line, then the
    /// media type, the source's validator and Last-Modified (empty if
    /// none), the max-age and the expiry in seconds since 1970 (wall-clock
    /// time, which survives a restart), one a line. HTTP field values hold
    /// no line breaks. (JSONEncoder took 0.5% of a thumbnail.)
    var storedMetadata: Data {
        let expires = Date().timeIntervalSince1970 + Double(ContinuousClock.now.duration(to: expires).components.seconds)
        let lines = [Self.storedVersion, mediaType, sourceValidator, lastModified ?? "", String(maxAge), String(Int64(expires))]
        return Data(lines.joined(separator: "\n").utf8)
    }

    private static let storedVersion = "imago-result-1"

    /// An answer read back from disk; nil if its metadata does not parse
    /// (an entry of another version: answered again, then replaced).
    init?(_ stored: CachedData) {
        let lines = String(decoding: stored.metadata, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 6, lines[0] == Self.storedVersion, let maxAge = Int(lines[4]), let expires = Int64(lines[5]) else { return nil }
        let remaining = max(0, Double(expires) - Date().timeIntervalSince1970)
        self.init(
            data: stored.data, mediaType: String(lines[1]), sourceValidator: String(lines[2]),
            lastModified: lines[3].isEmpty ? nil : String(lines[3]), maxAge: maxAge, lifetime: .seconds(remaining)
        )
    }
}
