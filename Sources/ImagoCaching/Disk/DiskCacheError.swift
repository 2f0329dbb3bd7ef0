/// Why a ``DiskCache`` operation failed, with the key and the path involved.
public struct DiskCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on.
    public enum Code: Sendable, Equatable {
        /// Another ``DiskCache`` (in this or another process) has the folder open.
        case inUse
        /// The file system is full or the quota is used up (ENOSPC, EDQUOT).
        case noSpace
        /// The file system is mounted read-only (EROFS).
        case readOnly
        /// The process may not write there (EACCES, EPERM).
        case permissionDenied
        /// The entry alone is larger than the cache's size limit.
        case entryTooLarge(size: Int, limit: Int)
        /// The cache was closed.
        case closed
        /// Any other failed system call, with its errno.
        case io(errno: Int32)
    }

    /// The operation that failed.
    public enum Operation: String, Sendable, Equatable {
        case open, load, store, remove, removeAll, snapshot
    }

    /// What went wrong.
    public var code: Code
    /// The operation that failed.
    public var operation: Operation
    /// The cache key involved, if the operation was about one entry.
    public var key: String?
    /// The file or folder involved.
    public var path: String
    /// The failed system call and its message, for the log.
    public var detail: String

    public init(code: Code, operation: Operation, key: String?, path: String, detail: String) {
        self.code = code
        self.operation = operation
        self.key = key
        self.path = path
        self.detail = detail
    }

    init(_ error: SystemCallError, operation: Operation, key: String?) {
        let code: Code =
            switch error.code {
            case ENOSPC, EDQUOT: .noSpace
            case EROFS: .readOnly
            case EACCES, EPERM: .permissionDenied
            default: .io(errno: error.code)
            }
        self.init(
            code: code, operation: operation, key: key, path: error.path,
            detail: "\(error.call): \(POSIXFile.describe(error.code)) (errno \(error.code))"
        )
    }

    public var description: String {
        let what = key.map { "\(operation.rawValue) of key \"\($0)\"" } ?? operation.rawValue
        let reason: String =
            switch code {
            case .inUse: "the cache folder is in use by another DiskCache"
            case .noSpace: "no space left on the device"
            case .readOnly: "the file system is read-only"
            case .permissionDenied: "permission denied"
            case .entryTooLarge(let size, let limit): "the entry (\(size) bytes) is larger than the size limit (\(limit) bytes)"
            case .closed: "the cache is closed"
            case .io: "I/O error"
            }
        return "disk cache: \(what) failed at \(path): \(reason) [\(detail)]"
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
