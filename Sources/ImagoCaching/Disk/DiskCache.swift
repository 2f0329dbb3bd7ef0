import Foundation
import ImagoConcurrency
import Logging
import Synchronization  // Atomic

/// A size-limited, crash-safe disk cache: one file per entry, an in-memory
/// LRU index, and a snapshot of that index for fast opening.
///
/// - Every entry is one file named by the SHA-256 of its key, in one of 256
///   sub-folders, written to a temporary file and renamed into place, with a
///   header that holds the key and a checksum: a torn or corrupt file is
///   detected when read, removed, and reported as a miss.
/// - The total size never exceeds ``Configuration/sizeLimit`` by more than
///   the entry being written: each store evicts least recently used entries
///   before its file is renamed into place.
/// - Only one `DiskCache` may have a folder open at a time, in any process: a
///   second one gets ``DiskCacheError/Code/inUse``. Inside a process, share
///   the instance.
///
/// The methods block on file I/O; call them from a thread that may block.
///
/// ```swift
/// let cache = try DiskCache(path: "/var/cache/myapp/images")
/// try cache.storeData(jpeg, metadata: Data(), forKey: url.absoluteString)
/// let hit = cache.cachedData(forKey: url.absoluteString)?.data
/// ```
public final class DiskCache: DataCaching, Sendable {
    /// The cache folder.
    public let path: String
    /// The configuration the cache was opened with.
    public let configuration: Configuration

    struct State: Sendable {
        var index: DiskIndex
        var lockFile: Int32
        /// The index changed since the last snapshot.
        var isDirty = false
        var isClosed = false
        /// With ``Admission/secondStore(window:)``: the keys stored once.
        var doorkeeper: Doorkeeper?
    }

    let state: Locked<State>
    private let temporaryFileCounter = Atomic<UInt64>(0)
    /// Serialises snapshot writes; counts the snapshots written.
    let snapshotsWritten = Locked<Int>(0)
    let maintenance = Locked<Task<Void, Never>?>(nil)

    /// Opens (creating it if needed) the cache in the folder at `path`.
    ///
    /// - Throws: ``DiskCacheError`` with code `.inUse` if another `DiskCache`
    ///   has the folder open, or the error that stopped the folder from being
    ///   created or read.
    public init(path: String, configuration: Configuration = Configuration()) throws(DiskCacheError) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.configuration = configuration
        let lockFile = try Self.lockFolder(self.path)
        let index: DiskIndex
        do throws(SystemCallError) {
            index = try Self.loadIndex(folder: self.path, logger: configuration.logger)
        } catch {
            POSIXFile.close(lockFile)
            throw DiskCacheError(error, operation: .open, key: nil)
        }
        var state = State(index: index, lockFile: lockFile)
        if case .secondStore(let window) = configuration.admission { state.doorkeeper = Doorkeeper(window: window) }
        self.state = Locked(state)
        if index.totalSize > configuration.sizeLimit {
            try trim(toSize: configuration.sizeLimit)
        }
        startMaintenance()
    }

    deinit {
        close()
    }

    // MARK: Reading

    public func cachedData(forKey key: String) -> CachedData? {
        let hash = EntryHash(key: key)
        let time = currentTime()
        let found = state.withLock { state -> DiskIndex.Record? in
            guard !state.isClosed, let record = state.index.touch(hash, at: time) else { return nil }
            state.isDirty = true
            return record
        }
        guard let record = found else { return nil }
        let file = entryPath(hash)
        do throws(SystemCallError) {
            let fd = try POSIXFile.open(file, O_RDONLY)
            defer { POSIXFile.close(fd) }
            switch try EntryFile.read(fd, path: file, owner: .key(Array(key.utf8))) {
            case .entry(let entry):
                return entry
            case .otherKey:
                configuration.logger.warning("disk cache: SHA-256 collision, not served", metadata: ["key": "\(key)", "path": "\(file)"])
                return nil
            case .corrupt(let reason):
                configuration.logger.warning("disk cache: removed a corrupt entry (\(reason))", metadata: ["key": "\(key)", "path": "\(file)"])
                discard(record)
                return nil
            }
        } catch {
            if error.code == ENOENT {
                forgetMissing(record)
            } else {
                configuration.logger.warning("\(DiskCacheError(error, operation: .load, key: key)); reported as a miss")
            }
            return nil
        }
    }

    /// Answered from the in-memory index, never waiting: no I/O, and while
    /// another thread holds the index (a store's rename, a trim's batch of
    /// unlinks) the answer is "maybe", so a caller on the main thread never blocks.
    public func mayContainData(forKey key: String) -> Bool {
        let hash = EntryHash(key: key)
        return state.tryWithLock { !$0.isClosed && $0.index.record(for: hash) != nil } ?? true
    }

    /// With ``Admission/secondStore(window:)``, `false` for a key seen for
    /// the first time, which is remembered as if stored.
    public func admitsData(forKey key: String) -> Bool {
        let hash = EntryHash(key: key)
        return state.withLock { !$0.isClosed && Self.admits(hash, &$0) }
    }

    /// Whether a store of `hash` writes: it has an entry, or the admission lets it in.
    private static func admits(_ hash: EntryHash, _ state: inout State) -> Bool {
        state.index.record(for: hash) != nil || state.doorkeeper?.admits(hash.words.0) != false
    }

    public func containsData(forKey key: String) -> Bool {
        let hash = EntryHash(key: key)
        return state.withLock { !$0.isClosed && $0.index.record(for: hash) != nil }
    }

    /// The total size of the entries' files, in bytes.
    public var totalSize: Int {
        state.withLock { Int($0.index.totalSize) }
    }

    /// The number of entries.
    public var count: Int {
        state.withLock { $0.index.count }
    }

    // MARK: Writing

    /// Writes the entry for `key`, replacing the one stored before. With
    /// ``Admission/secondStore(window:)``, the first store of a key that has
    /// no entry only remembers the key and returns.
    public func storeData(_ data: Data, metadata: Data = Data(), forKey key: String) throws(DiskCacheError) {
        let keyBytes = Array(key.utf8)
        let size = EntryFile.fileSize(keyCount: keyBytes.count, metadataCount: metadata.count, bodyCount: data.count)
        let hash = EntryHash(key: key)
        let destination = entryPath(hash)
        guard size <= configuration.sizeLimit, keyBytes.count <= UInt32.max, metadata.count <= UInt32.max else {
            throw DiskCacheError(
                code: .entryTooLarge(size: size, limit: configuration.sizeLimit), operation: .store, key: key,
                path: destination, detail: "not stored"
            )
        }
        let admitted = try state.withLock { state throws(DiskCacheError) in
            guard !state.isClosed else { throw closedError(.store, key: key) }
            return Self.admits(hash, &state)
        }
        guard admitted else { return }
        let temporary = folderPath(hash.shard) + "/.tmp-\(Self.processID)-\(temporaryFileCounter.add(1, ordering: .relaxed).newValue)"
        let prefix = EntryFile.prefix(key: keyBytes, metadata: metadata, body: data)
        try writeTemporaryFile(temporary, prefix: prefix, body: data, shard: hash.shard, key: key)
        let time = currentTime()
        let committed = state.withLock { state -> Result<Void, DiskCacheError> in
            guard !state.isClosed else { return .failure(closedError(.store, key: key)) }
            let replaced = state.index.record(for: hash)?.size ?? 0
            // Make room first, so the limit holds even at the moment of the rename.
            while state.index.totalSize - replaced + Int64(size) > Int64(configuration.sizeLimit),
                let victim = state.index.leastRecentlyUsed(excluding: hash)
            {
                if case .failure(let error) = removeEntry(victim.hash, from: &state, operation: .store) {
                    return .failure(error)
                }
            }
            do throws(SystemCallError) {
                try POSIXFile.rename(temporary, to: destination)
            } catch {
                return .failure(DiskCacheError(error, operation: .store, key: key))
            }
            state.index.insert(hash, size: Int64(size), accessTime: time)
            state.isDirty = true
            return .success(())
        }
        if case .failure(let error) = committed {
            try? POSIXFile.unlink(temporary)
            throw error
        }
        if configuration.durability == .powerLoss {
            // After the rename, outside the lock: the folder's new entry must reach the device too.
            do throws(SystemCallError) {
                try POSIXFile.syncDirectory(folderPath(hash.shard))
            } catch {
                throw DiskCacheError(error, operation: .store, key: key)
            }
        }
    }

    public func removeData(forKey key: String) throws(DiskCacheError) {
        let hash = EntryHash(key: key)
        try state.withLock { state throws(DiskCacheError) in
            guard !state.isClosed else { throw closedError(.remove, key: key) }
            guard state.index.record(for: hash) != nil else { return }
            try removeEntry(hash, from: &state, operation: .remove).get()
        }
    }

    // MARK: Internals

    /// Removes an entry's file, then its record. Runs under the state lock so
    /// that no store of the same key can slip in between.
    func removeEntry(_ hash: EntryHash, from state: inout State, operation: DiskCacheError.Operation) -> Result<Void, DiskCacheError> {
        do throws(SystemCallError) {
            try POSIXFile.unlink(entryPath(hash))
        } catch {
            return .failure(DiskCacheError(error, operation: operation, key: nil))
        }
        state.index.remove(hash)
        state.isDirty = true
        return .success(())
    }

    private func writeTemporaryFile(_ temporary: String, prefix: [UInt8], body: Data, shard: Int, key: String) throws(DiskCacheError) {
        do throws(SystemCallError) {
            let fd: Int32
            do throws(SystemCallError) {
                fd = try POSIXFile.open(temporary, O_WRONLY | O_CREAT | O_EXCL)
            } catch  where error.code == ENOENT {
                // The sub-folder (or the whole cache folder) is missing: create it again.
                try recreateFolder(shard: shard)
                fd = try POSIXFile.open(temporary, O_WRONLY | O_CREAT | O_EXCL)
            }
            defer { POSIXFile.close(fd) }
            do throws(SystemCallError) {
                try prefix.withUnsafeBytes { head in
                    body.withUnsafeBytes { tail in
                        Result { () throws(SystemCallError) in try POSIXFile.write(fd, head, tail, path: temporary) }
                    }
                }.get()
                // Before the rename: once the name points at the file, its bytes must be on the device.
                if configuration.durability == .powerLoss { try POSIXFile.sync(fd, path: temporary) }
            } catch {
                try? POSIXFile.unlink(temporary)
                throw error
            }
        } catch {
            // Thrown, not logged: the caller logs it once (the pipeline does).
            throw DiskCacheError(error, operation: .store, key: key)
        }
    }

    /// Recreates the cache folder and a sub-folder after someone deleted them.
    /// If the whole folder went, so did every entry: the index starts empty.
    private func recreateFolder(shard: Int) throws(SystemCallError) {
        if try POSIXFile.modificationTime(path) == nil {
            configuration.logger.warning("disk cache: the cache folder was deleted; recreating it empty", metadata: ["path": "\(path)"])
            var lockFile: Int32?
            do {
                lockFile = try Self.lockFolder(path)
            } catch {
                // Another cache took the new folder first; this one keeps its old lock.
                configuration.logger.warning("\(error)")
            }
            state.withLock { state in
                state.index = DiskIndex()
                state.isDirty = true
                if let lockFile {
                    POSIXFile.close(state.lockFile)
                    state.lockFile = lockFile
                }
            }
        }
        try POSIXFile.makeDirectory(folderPath(shard))
    }

    /// A reader found a corrupt file: remove it, unless a store replaced it meanwhile.
    func discard(_ record: DiskIndex.Record) {
        state.withLock { state in
            guard state.index.record(for: record.hash)?.generation == record.generation else { return }
            if case .failure(let error) = removeEntry(record.hash, from: &state, operation: .remove) {
                configuration.logger.warning("\(error)")
            }
        }
    }

    /// A reader found an indexed file missing: someone deleted it, perhaps with
    /// its whole folder, in which case every record of that folder goes.
    func forgetMissing(_ record: DiskIndex.Record) {
        let folderExists = (try? POSIXFile.modificationTime(folderPath(record.hash.shard))) != nil
        state.withLock { state in
            if !folderExists {
                state.index.removeAll { $0.hash.shard == record.hash.shard }
            } else if state.index.record(for: record.hash)?.generation == record.generation {
                state.index.remove(record.hash)
            }
            state.isDirty = true
        }
    }

    func closedError(_ operation: DiskCacheError.Operation, key: String?) -> DiskCacheError {
        DiskCacheError(code: .closed, operation: operation, key: key, path: path, detail: "close() was called")
    }

    /// Seconds since 1970 on the configured clock.
    func currentTime() -> Int64 {
        Int64(configuration.currentDate().timeIntervalSince1970.rounded(.down))
    }

    /// Part of every temporary file's name; getpid() is a system call.
    static let processID = getpid()

    func folderPath(_ shard: Int) -> String {
        path + "/" + EntryHash.shardName(shard)
    }

    func entryPath(_ hash: EntryHash) -> String {
        folderPath(hash.shard) + "/" + hash.fileName
    }
}
