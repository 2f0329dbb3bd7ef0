import Crypto
import Dispatch
import Foundation
import Imago
import NIOCore

/// One encoded answer, as it is sent, and what it was made from.
struct EncodedResult: Sendable {
    /// The bytes, in the buffer every response sends: answers share it
    /// rather than each copying it (a client that pipelines requests and
    /// does not read would otherwise hold a copy per request).
    var bytes: ByteBuffer
    var mediaType: String
    /// Strong: a hash of the bytes, which the source's content, the
    /// options and the format all determine.
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
        etag = "\"" + Self.hex(SHA256.hash(data: data).prefix(16)) + "\""
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

    /// Lower-case hexadecimal, two digits a byte. (`String(format:)` per
    /// byte took 1.3% of a thumbnail's transformation in `perf`, for the
    /// 48 bytes of the ETag and the source's hash.)
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
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
        source.absoluteString + "\u{0}" + options.cacheKey + "\u{0}" + "\(format)"
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
    /// What is stored beside the bytes on disk.
    private struct Stored: Codable {
        var mediaType: String
        var sourceValidator: String
        var lastModified: String?
        var maxAge: Int
        /// Wall-clock time, which survives a restart.
        var expires: Date
    }

    var storedMetadata: Data {
        let remaining = ContinuousClock.now.duration(to: expires)
        let stored = Stored(
            mediaType: mediaType, sourceValidator: sourceValidator, lastModified: lastModified, maxAge: maxAge,
            expires: Date().addingTimeInterval(Double(remaining.components.seconds))
        )
        return (try? JSONEncoder().encode(stored)) ?? Data()
    }

    /// An answer read back from disk; nil if its metadata does not decode.
    init?(_ stored: CachedData) {
        guard let metadata = try? JSONDecoder().decode(Stored.self, from: stored.metadata) else { return nil }
        let remaining = max(0, metadata.expires.timeIntervalSinceNow)
        self.init(
            data: stored.data, mediaType: metadata.mediaType, sourceValidator: metadata.sourceValidator,
            lastModified: metadata.lastModified, maxAge: metadata.maxAge, lifetime: .seconds(remaining)
        )
    }
}
