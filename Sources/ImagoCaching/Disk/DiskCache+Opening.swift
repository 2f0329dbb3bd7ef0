import Foundation
import Logging

extension DiskCache {
    static let lockFileName = "lock"
    static let snapshotFileName = "index"
    static let temporaryPrefix = ".tmp-"

    /// Creates the folder if needed and takes its lock file; returns the
    /// lock file's descriptor, which holds the lock until it is closed.
    static func lockFolder(_ path: String) throws(DiskCacheError) -> Int32 {
        let lockPath = path + "/" + lockFileName
        do throws(SystemCallError) {
            try makeDirectories(path)
            let fd = try POSIXFile.open(lockPath, O_RDONLY | O_CREAT)
            // A child process being spawned anywhere in this process shares
            // every open file description until it execs (close-on-exec only
            // acts then), so a lock that `close()` has just released can stay
            // held for a moment. Seen in the tests, which spawn processes in
            // parallel; retried for up to 100 ms before reporting `.inUse`.
            for attempt in 0..<20 {
                do throws(SystemCallError) {
                    if try POSIXFile.tryLock(fd, path: lockPath) { return fd }
                } catch {
                    POSIXFile.close(fd)
                    throw error
                }
                if attempt < 19 { usleep(5_000) }
            }
            POSIXFile.close(fd)
        } catch {
            throw DiskCacheError(error, operation: .open, key: nil)
        }
        throw DiskCacheError(code: .inUse, operation: .open, key: nil, path: path, detail: "flock: \(lockPath) is held")
    }

    /// Builds the index from the snapshot, listing again every sub-folder that
    /// changed since it was taken (or all of them, without a usable snapshot).
    /// Leftover temporary files, from writes a crash interrupted, are removed.
    static func loadIndex(folder: String, logger: Logger) throws(SystemCallError) -> DiskIndex {
        let snapshot = readSnapshot(folder + "/" + snapshotFileName, logger: logger)
        let entries = snapshot?.entries ?? []
        let margin = snapshot?.trustMarginNanoseconds ?? 0
        var listedFolders = Set<Int>()
        for shard in 0..<IndexSnapshot.folderCount {
            let modified = try POSIXFile.modificationTime(folder + "/" + EntryHash.shardName(shard))
            if snapshot?.trusts(folder: shard, modifiedAt: modified, margin: margin) != true { listedFolders.insert(shard) }
        }
        guard !listedFolders.isEmpty else { return DiskIndex(oldestFirst: entries) }

        // Entries ranked by (access time, position in the snapshot); files new
        // since the snapshot rank after every known one of the same second.
        var ranked: [(entry: IndexSnapshot.Entry, rank: Int)] = []
        var known: [EntryHash: Int] = [:]
        for (position, entry) in entries.enumerated() {
            if listedFolders.contains(entry.hash.shard) { known[entry.hash] = position } else { ranked.append((entry, position)) }
        }
        for shard in listedFolders.sorted() {
            let shardPath = folder + "/" + EntryHash.shardName(shard)
            for file in try POSIXFile.listDirectory(shardPath) ?? [] {
                if file.name.hasPrefix(temporaryPrefix) {
                    try? POSIXFile.unlink(shardPath + "/" + file.name)
                    continue
                }
                guard let hash = EntryHash(fileName: file.name), hash.shard == shard else { continue }
                if let position = known[hash], let snapshot, file.modified <= snapshot.writtenAt, entries[position].size == file.size {
                    ranked.append((entries[position], position))  // unchanged since the snapshot
                } else {
                    ranked.append(((hash, file.size, file.modified / 1_000_000_000), entries.count + ranked.count))
                }
            }
        }
        logger.debug("disk cache: listed \(listedFolders.count) folders", metadata: ["path": "\(folder)"])
        ranked.sort { ($0.entry.accessTime, $0.rank) < ($1.entry.accessTime, $1.rank) }
        return DiskIndex(oldestFirst: ranked.map(\.entry))
    }

    private static func readSnapshot(_ path: String, logger: Logger) -> IndexSnapshot? {
        do throws(SystemCallError) {
            let fd = try POSIXFile.open(path, O_RDONLY)
            defer { POSIXFile.close(fd) }
            let size = try POSIXFile.size(fd, path: path)
            var bytes = [UInt8](repeating: 0, count: size)
            let read = try bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemCallError) in try POSIXFile.read(fd, into: buffer, at: 0, path: path) }
            }.get()
            if read == size, let snapshot = IndexSnapshot(decoding: bytes) { return snapshot }
            logger.warning("disk cache: the index snapshot is corrupt; listing every folder", metadata: ["path": "\(path)"])
        } catch  where error.code == ENOENT {
            // No snapshot yet: a new cache, or one that was never closed.
        } catch {
            logger.warning("disk cache: cannot read the index snapshot: \(POSIXFile.describe(error.code))", metadata: ["path": "\(path)"])
        }
        return nil
    }

    /// `mkdir -p`.
    private static func makeDirectories(_ path: String) throws(SystemCallError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            try POSIXFile.makeDirectory(prefix)
        }
    }
}
