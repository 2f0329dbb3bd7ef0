import Crypto
import Foundation
import HTTPTypes
import Imago
import ImagoCaching
import ImagoConcurrency
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
    /// a cryptographic hash, which costs more for nothing: an ETag only
    /// tells one URL's versions apart, and whoever could make two of them
    /// collide controls the source anyway.
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

/// What tells answers apart: the source, the normalised options and the
/// output format, never the signature, so differently signed URLs for the
/// same variant share one answer.
struct ResultKey: Hashable, Sendable, CustomStringConvertible {
    /// The key on disk: the fields joined by NUL, which none of them
    /// contains (a URL's absolute string is percent-encoded; the options'
    /// key and the format's name are ours, the watermark's is a digest or
    /// a URL).
    let diskKey: String

    /// The key of the answer made from `source` by a URL whose canonical
    /// options (``ProcessingOptions/cacheKey``, a thumbor URL's
    /// ``ThumborProcessor/identifier``, `info`) are `options`, in `format`
    /// when the URL settles it, with the watermark whose key is
    /// `watermark`, if any.
    init(source: URL, options: String, format: OutputFormat? = nil, watermark: String? = nil) {
        diskKey = source.absoluteString + "\u{0}" + options + (format.map { "\u{0}" + $0.rawValue } ?? "") + (watermark.map { "\u{0}" + $0 } ?? "")
    }

    /// The key whose ``diskKey`` is `diskKey`.
    init(diskKey: String) {
        self.diskKey = diskKey
    }

    /// The key of the same answer made for a request that forwarded
    /// `fields` to the source: their digest, never their values (a cookie,
    /// a token), goes into the key.
    func forwarding(_ fields: HTTPFields) -> ResultKey {
        let text = fields.map { "\($0.name.canonicalName): \($0.value)\n" }.joined()
        let digest = SHA256.hash(data: Data(text.utf8)).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        return ResultKey(diskKey: diskKey + "\u{0}forwarded " + digest)
    }

    /// The source's URL, as every key starts with it.
    var source: String { String(diskKey.prefix { $0 != "\u{0}" }) }

    var description: String { diskKey }
}

/// Encoded answers, kept in memory and, where a folder is given, on disk
/// (so a restarted server keeps them), with identical requests in flight
/// made once (the pipeline's ``CoalescingPool``): the first starts the
/// work, the others wait for its result, and the work is cancelled when
/// every request waiting for it is.
///
/// With a disk tier, a new answer goes to disk only, and into memory when
/// it is asked for again: answers asked for once (a crawler, a cold start,
/// the long tail) neither take memory nor push out the ones in demand.
/// An answer is sent without waiting for its write: until the write lands
/// it is served from the writes pending, of which at most
/// `pendingWriteLimit` wait at once (the next store waits for a place).
final class ResultCache: Sendable {
    private let memory: MemoryCache<ResultKey, EncodedResult>
    private let disk: DiskCache?
    /// Where the disk tier's blocking reads and writes run.
    private let diskThreads: PriorityThreadPool
    private let inFlight = CoalescingPool<ResultKey, EncodedResult, ServiceError, Never>()
    /// Answers on their way to disk, each written by one job at a time
    /// (`version` tells the job whether a newer answer came meanwhile).
    private let pending = Locked<[ResultKey: (result: EncodedResult, version: Int)]>([:])
    private let pendingPlaces: WeightedSemaphore
    /// Held by every write not yet done, so that ``close()`` can wait for them.
    private let writes = PendingWork()
    /// The answers made from each source, for ``purge(source:)``.
    private let index: SourceIndex
    let lifetime: Duration

    static let pendingWriteLimit = 64

    init(costLimit: Int, lifetime: Duration, disk: DiskCache?, diskThreads: PriorityThreadPool) {
        memory = MemoryCache(configuration: .init(costLimit: costLimit))
        self.disk = disk
        self.diskThreads = diskThreads
        self.lifetime = lifetime
        pendingPlaces = WeightedSemaphore(capacity: Self.pendingWriteLimit)
        index = SourceIndex(disk: disk)
    }

    /// The answer kept for `key`, expired or not: from memory, else from disk.
    func cached(_ key: ResultKey) async -> EncodedResult? {
        if let result = memory.value(forKey: key) { return result }
        if let result = pending.withLock({ $0[key]?.result }) { return result }
        guard let disk, disk.mayContainData(forKey: key.diskKey) else { return nil }
        let stored = await diskThreads.run { disk.cachedData(forKey: key.diskKey) }
        guard let stored, let result = EncodedResult(stored) else { return nil }
        memory.set(result, forKey: key, cost: result.bytes.readableBytes)
        return result
    }

    /// The answer for `key`: joins the work in flight for it, or starts
    /// `make`. A cancelled request leaves the work; the last one to leave
    /// cancels it.
    func shared(_ key: ResultKey, make: @escaping @Sendable () async throws(ServiceError) -> EncodedResult) async throws(ServiceError)
        -> EncodedResult
    {
        let outcome = await inFlight.value(for: key, priority: .normal) { _ in
            do throws(ServiceError) {
                return .success(try await make())
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Keeps `result` for `key`: in memory when there is no disk tier or an
    /// older answer is there, and on disk, written after this returns.
    func store(_ result: EncodedResult, forKey key: ResultKey) async {
        if disk == nil || memory.value(forKey: key) != nil {
            memory.set(result, forKey: key, cost: result.bytes.readableBytes)
        }
        guard let disk else { return await diskThreads.run { [index] in index.add(key.diskKey, source: key.source) } }
        // Waits for a place while the disk is behind; none if the work was cancelled meanwhile.
        guard let place = await pendingPlaces.acquire() else { return }
        let isWriting = pending.withLock { pending in
            let writing = pending[key]
            pending[key] = (result, (writing?.version ?? 0) + 1)
            return writing != nil
        }
        // A job already writing this key writes the newer answer next.
        guard !isWriting else { return pendingPlaces.release(place) }
        writes.enter()
        diskThreads.submit(priority: .normal) { [pending, pendingPlaces, writes, index] in
            index.add(key.diskKey, source: key.source)
            while let next = pending.withLock({ $0[key] }) {
                // A failed store (a full disk) only costs a later transformation.
                try? disk.storeData(Data(next.result.bytes.readableBytesView), metadata: next.result.storedMetadata, forKey: key.diskKey)
                // Written, unless a newer answer came meanwhile; a purge meanwhile takes it out again.
                let (done, purged) = pending.withLock { pending in
                    guard let current = pending[key] else { return (true, true) }
                    guard current.version == next.version else { return (false, false) }
                    pending[key] = nil
                    return (true, false)
                }
                if purged { try? disk.removeData(forKey: key.diskKey) }
                if done { break }
            }
            pendingPlaces.release(place)
            writes.leave()
        }
    }

    /// Removes every answer made from `source` (its URL's absolute string)
    /// from memory and disk; returns how many there were.
    func purge(source: String) async -> Int {
        // The answers on their way to disk are indexed as their writes start:
        // those pending are waited for (off the disk threads they need).
        await writes.idle()
        return await diskThreads.run { [memory, pending, index, disk] in
            var removed = 0
            for diskKey in index.remove(source) {
                let key = ResultKey(diskKey: diskKey)
                let inMemory = memory.removeValue(forKey: key) != nil
                let waiting = pending.withLock { $0.removeValue(forKey: key) != nil }
                let onDisk = disk?.containsData(forKey: diskKey) ?? false
                try? disk?.removeData(forKey: diskKey)
                if inMemory || waiting || onDisk { removed += 1 }
            }
            return removed
        }
    }

    /// Waits for the writes pending, then closes the disk tier, saving its index snapshot.
    func close() {
        writes.waitUntilIdle()
        disk?.close()
    }

    var count: Int { memory.totalCount }
}

extension EncodedResult {
    /// What is stored beside the bytes on disk: a version line, then the
    /// media type, the source's validator and Last-Modified (empty if
    /// none), the max-age and the expiry in seconds since 1970 (wall-clock
    /// time, which survives a restart), one a line. HTTP field values hold
    /// no line breaks, and lines cost less to write and read than JSON.
    var storedMetadata: Data {
        let expires = Date().timeIntervalSince1970 + Double(ContinuousClock.now.duration(to: expires).components.seconds)
        let lines = [Self.storedVersion, mediaType, sourceValidator, lastModified ?? "", String(maxAge), String(Int64(expires))]
        return Data(lines.joined(separator: "\n").utf8)
    }

    private static let storedVersion = "imago-result-2"

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
