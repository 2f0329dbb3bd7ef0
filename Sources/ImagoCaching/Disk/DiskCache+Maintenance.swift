import Foundation
import ImagoConcurrency

extension DiskCache {
    /// Removes every entry.
    public func removeAll() throws(DiskCacheError) {
        try state.withLock { state throws(DiskCacheError) in
            guard !state.isClosed else { throw closedError(.removeAll, key: nil) }
            // List the folders rather than the index, so that stray entry files go too.
            // Temporary files belong to stores in flight; they land or clean up themselves.
            do throws(SystemCallError) {
                for shard in 0..<IndexSnapshot.folderCount {
                    for file in try POSIXFile.listDirectory(folderPath(shard)) ?? [] where !file.name.hasPrefix(Self.temporaryPrefix) {
                        try POSIXFile.unlink(folderPath(shard) + "/" + file.name)
                    }
                }
            } catch {
                // What was removed is gone; keep the records of what is left.
                state.index.removeAll { (try? POSIXFile.modificationTime(entryPath($0.hash))) == nil }
                state.isDirty = true
                throw DiskCacheError(error, operation: .removeAll, key: nil)
            }
            state.index = DiskIndex()
            state.isDirty = true
        }
    }

    /// Removes the entries not read or written for longer than
    /// ``Configuration/maxAge``.
    public func removeExpired() throws(DiskCacheError) {
        guard let maxAge = configuration.maxAge else { return }
        let cutoff = currentTime() - maxAge.components.seconds
        try evict(operation: .remove) { index in
            index.leastRecentlyUsed().map { $0.accessTime < cutoff } ?? false
        }
    }

    /// Evicts least recently used entries until the total size is at most `size`.
    public func trim(toSize size: Int) throws(DiskCacheError) {
        try evict(operation: .remove) { $0.totalSize > Int64(max(0, size)) }
    }

    /// Saves the index snapshot if the index changed since the last one, so
    /// that the next open reads it instead of listing the folders. Called
    /// periodically and by ``close()``.
    public func flush() throws(DiskCacheError) {
        try writeSnapshot(evenIfClosed: false)
    }

    /// Saves the snapshot, stops the periodic maintenance and releases the folder.
    /// Later calls fail with ``DiskCacheError/Code/closed`` (reads miss).
    /// Called by `deinit` if you do not.
    public func close() {
        let task = maintenance.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        let wasOpen = state.withLock { state in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard wasOpen else { return }
        do throws(DiskCacheError) {
            try writeSnapshot(evenIfClosed: true)
        } catch {
            configuration.logger.warning("\(error)")
        }
        state.withLock { POSIXFile.close($0.lockFile) }
    }

    // MARK: Internals

    /// Evicts from the least recently used end while `shouldEvict` says so,
    /// in batches: the lock is released every `batchSize` removals so that a
    /// long trim (tens of thousands of unlinks) does not stall reads and stores.
    private func evict(operation: DiskCacheError.Operation, while shouldEvict: (DiskIndex) -> Bool) throws(DiskCacheError) {
        let batchSize = 64
        var finished = false
        while !finished {
            finished = try state.withLock { state throws(DiskCacheError) -> Bool in
                guard !state.isClosed else { throw closedError(operation, key: nil) }
                for _ in 0..<batchSize {
                    guard shouldEvict(state.index), let victim = state.index.leastRecentlyUsed() else { return true }
                    try removeEntry(victim.hash, from: &state, operation: operation).get()
                }
                return false
            }
        }
    }

    private func writeSnapshot(evenIfClosed: Bool) throws(DiskCacheError) {
        try snapshotsWritten.withLock { written throws(DiskCacheError) in
            // Take the records and the folder times together, under the lock,
            // so that no change falls between them.
            let snapshot = state.withLock { state -> IndexSnapshot? in
                guard state.isDirty, evenIfClosed || !state.isClosed else { return nil }
                state.isDirty = false
                let folders = (0..<IndexSnapshot.folderCount).map { try? POSIXFile.modificationTime(folderPath($0)) }
                return IndexSnapshot(
                    writtenAt: POSIXFile.realTime(),
                    folderModificationTimes: folders,
                    entries: state.index.oldestFirst.map { ($0.hash, $0.size, $0.accessTime) }
                )
            }
            guard let snapshot else { return }
            let destination = path + "/" + Self.snapshotFileName
            let temporary = destination + Self.temporaryPrefix + "\(Self.processID)"
            do throws(SystemCallError) {
                let fd = try POSIXFile.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
                defer { POSIXFile.close(fd) }
                try snapshot.encoded().withUnsafeBytes { bytes in
                    Result { () throws(SystemCallError) in
                        try POSIXFile.write(fd, bytes, UnsafeRawBufferPointer(start: nil, count: 0), path: temporary)
                    }
                }.get()
                try POSIXFile.rename(temporary, to: destination)
                written += 1
            } catch {
                try? POSIXFile.unlink(temporary)
                state.withLock { $0.isDirty = true }
                throw DiskCacheError(error, operation: .snapshot, key: nil)
            }
        }
    }

    /// Starts the periodic snapshot and expiry sweep: a task that sleeps,
    /// then runs the (blocking) work on a thread of its own, off Swift's
    /// cooperative pool.
    func startMaintenance() {
        guard let interval = configuration.maintenanceInterval else { return }
        let thread = PriorityThreadPool(threads: 1, name: "imago-disk-sweep")
        let task = Task.detached(priority: .background) { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let cache = self else { return }
                await thread.run(priority: .low) { cache.performMaintenance() }
            }
        }
        maintenance.withLock { $0 = task }
    }

    private func performMaintenance() {
        do throws(DiskCacheError) {
            try removeExpired()
            try flush()
        } catch  where error.code == .closed {
            // Closed between two ticks.
        } catch {
            configuration.logger.warning("\(error)")
        }
    }
}
