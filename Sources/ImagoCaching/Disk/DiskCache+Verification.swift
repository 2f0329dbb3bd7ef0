import Foundation

extension DiskCache {
    /// What ``verify()`` found.
    public struct VerificationReport: Sendable, Equatable {
        /// Entries read whole and found sound.
        public var sound = 0
        /// Entries that were damaged (torn, truncated, bad checksum, misplaced) and were removed.
        public var removed = 0
        /// Indexed entries whose file had disappeared; their records were dropped.
        public var missing = 0
        /// Bytes freed by the removals.
        public var bytesRemoved: Int64 = 0
        /// One line per removal: the file and the reason.
        public var problems: [String] = []
    }

    /// Reads every entry whole, checks its header, key and checksum, and
    /// removes the damaged ones. Blocks for as long as reading the whole cache
    /// takes; other calls go on meanwhile.
    public func verify() -> VerificationReport {
        var report = VerificationReport()
        let records = state.withLock { $0.isClosed ? [] : $0.index.oldestFirst }
        for record in records {
            let path = entryPath(record.hash)
            let outcome: EntryFile.ReadResult
            do throws(SystemCallError) {
                let fd = try POSIXFile.open(path, O_RDONLY)
                defer { POSIXFile.close(fd) }
                outcome = try EntryFile.read(fd, path: path, owner: .hash(record.hash))
            } catch {
                if error.code == ENOENT {
                    forgetMissing(record)
                    report.missing += 1
                } else {
                    report.problems.append("\(path): unreadable (\(error))")
                }
                continue
            }
            switch outcome {
            case .entry:
                report.sound += 1
            case .otherKey:
                discard(record)
                report.removed += 1
                report.bytesRemoved += record.size
                report.problems.append("\(path): holds an entry for another key")
            case .corrupt(let reason):
                discard(record)
                report.removed += 1
                report.bytesRemoved += record.size
                report.problems.append("\(path): \(reason)")
            }
        }
        return report
    }
}
