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
            let fd = try POSIXFile.open(lockPath, O_RDWR | O_CREAT)
            do throws(SystemCallError) {
                if try POSIXFile.tryLock(fd, path: lockPath) { return fd }
            } catch {
                POSIXFile.close(fd)
                throw error
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
        var trusted: [IndexSnapshot.Entry] = []
        var listed: [IndexSnapshot.Entry] = []
        var foldersListed = 0
        var trustedFolders = [Bool](repeating: false, count: IndexSnapshot.folderCount)
        for shard in 0..<IndexSnapshot.folderCount {
            let shardPath = folder + "/" + EntryHash.shardName(shard)
            let modified = try POSIXFile.modificationTime(shardPath)
            if let snapshot, snapshot.trusts(folder: shard, modifiedAt: modified) {
                trustedFolders[shard] = true
                continue
            }
            foldersListed += 1
            for file in try POSIXFile.listDirectory(shardPath) ?? [] {
                if file.name.hasPrefix(temporaryPrefix) {
                    try? POSIXFile.unlink(shardPath + "/" + file.name)
                } else if let hash = EntryHash(fileName: file.name), hash.shard == shard {
                    listed.append((hash, file.size, file.modified / 1_000_000_000))
                }
            }
        }
        guard foldersListed > 0 else {
            return DiskIndex(oldestFirst: snapshot?.entries ?? [])
        }
        if let snapshot {
            // Keep the snapshot's order for trusted folders, and its access
            // times for listed files that were already known.
            var known: [EntryHash: Int64] = [:]
            for entry in snapshot.entries {
                if trustedFolders[entry.hash.shard] { trusted.append(entry) } else { known[entry.hash] = entry.accessTime }
            }
            for i in listed.indices {
                if let time = known[listed[i].hash] { listed[i].accessTime = max(listed[i].accessTime, time) }
            }
            logger.debug("disk cache: listed \(foldersListed) changed folders", metadata: ["path": "\(folder)"])
        }
        let merged = (trusted + listed).enumerated().sorted {
            ($0.element.accessTime, $0.offset) < ($1.element.accessTime, $1.offset)
        }
        return DiskIndex(oldestFirst: merged.map(\.element))
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
        } catch where error.code == ENOENT {
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
