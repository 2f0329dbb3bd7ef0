#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call: which call, on which path, and the errno it set.
struct SystemCallError: Error, Sendable {
    var call: String
    var path: String
    var code: Int32

    init(_ call: String, _ path: String, code: Int32 = errno) {
        self.call = call
        self.path = path
        self.code = code
    }
}

/// Thin, throwing wrappers over the POSIX calls the disk cache needs. Plain
/// system calls keep the cache's hot paths free of Foundation's extra work
/// (`Data.write` fsyncs, `FileManager` allocates per call) and give exact errno
/// values for the error type. Every call retries on EINTR.
enum POSIXFile {
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(SystemCallError) -> Int32 {
        while true {
            let fd = systemOpen(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw SystemCallError("open", path) }
        }
    }

    static func close(_ fd: Int32) {
        _ = systemClose(fd)
    }

    /// The size of an open file.
    static func size(_ fd: Int32, path: String) throws(SystemCallError) -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("fstat", path) }
        return Int(info.st_size)
    }

    /// Reads into `buffer` from `offset` until it is full or the file ends;
    /// returns the number of bytes read.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String) throws(SystemCallError) -> Int {
        var done = 0
        while done < buffer.count, let base = buffer.baseAddress {
            let n = pread(fd, base + done, buffer.count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw SystemCallError("pread", path)
            }
        }
        return done
    }

    /// Writes all of `first` then all of `second`, continuing after short writes.
    static func write(_ fd: Int32, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, path: String) throws(SystemCallError) {
        var parts = [first, second].filter { $0.count > 0 }
        while !parts.isEmpty {
            var vectors = parts.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
            let n = writev(fd, &vectors, Int32(vectors.count))
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("writev", path)
            }
            var written = n
            while written > 0, let part = parts.first {
                if written >= part.count {
                    written -= part.count
                    parts.removeFirst()
                } else {
                    parts[0] = UnsafeRawBufferPointer(rebasing: part[written...])
                    written = 0
                }
            }
        }
    }

    /// Flushes the file's data and size to the storage device.
    static func sync(_ fd: Int32, path: String) throws(SystemCallError) {
        while fsync(fd) != 0 {
            guard errno == EINTR else { throw SystemCallError("fsync", path) }
        }
    }

    /// Flushes a directory's entries (a rename into it) to the storage device.
    static func syncDirectory(_ path: String) throws(SystemCallError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try sync(fd, path: path)
    }

    static func rename(_ from: String, to: String) throws(SystemCallError) {
        guard systemRename(from, to) == 0 else { throw SystemCallError("rename", to) }
    }

    /// Removes a file; a file that is already gone is not an error.
    static func unlink(_ path: String) throws(SystemCallError) {
        guard systemUnlink(path) == 0 || errno == ENOENT else { throw SystemCallError("unlink", path) }
    }

    /// Creates a directory; one that already exists is not an error.
    static func makeDirectory(_ path: String) throws(SystemCallError) {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw SystemCallError("mkdir", path) }
    }

    /// Modification time in nanoseconds since 1970, or nil if `path` does not exist.
    static func modificationTime(_ path: String) throws(SystemCallError) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw SystemCallError("stat", path)
        }
        return modified(info)
    }

    /// The entries of a directory (names and, for regular files, size and
    /// modification time), or nil if the directory does not exist.
    static func listDirectory(_ path: String) throws(SystemCallError) -> [(name: String, size: Int64, modified: Int64)]? {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return nil }
            throw SystemCallError("opendir", path)
        }
        defer { closedir(directory) }
        let fd = dirfd(directory)
        var result: [(name: String, size: Int64, modified: Int64)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            guard (info.st_mode & S_IFMT) == S_IFREG else { continue }
            result.append((name, Int64(info.st_size), modified(info)))
        }
        return result
    }

    /// Takes an exclusive advisory lock without waiting; false if another open
    /// file description (in this or another process) holds it.
    static func tryLock(_ fd: Int32, path: String) throws(SystemCallError) -> Bool {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EWOULDBLOCK { return false }
            if errno != EINTR { throw SystemCallError("flock", path) }
        }
        return true
    }

    /// Wall-clock time in nanoseconds, on the same clock as file modification times.
    static func realTime() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return nanoseconds(now)
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    private static func modified(_ info: stat) -> Int64 {
        #if canImport(Darwin)
            nanoseconds(info.st_mtimespec)
        #else
            nanoseconds(info.st_mtim)
        #endif
    }

    private static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

// The wrappers above share names with the C functions they call.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func systemUnlink(_ path: String) -> Int32 { unlink(path) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
