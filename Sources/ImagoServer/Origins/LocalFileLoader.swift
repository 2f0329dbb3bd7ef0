import Foundation
import HTTPTypes
import Imago
import ImagoConcurrency

#if canImport(Glibc)
    import Glibc
#endif

/// Reads `local:///path` sources from files under a root folder the
/// operator sets, and nothing outside it: the path's segments were checked
/// by the ``SourcePolicy`` (no `.` or `..`, spelled plainly or
/// percent-encoded, no NUL); here the file's real path, every symbolic
/// link resolved, must still lie under the root's, and it must be a
/// regular file (a device, a FIFO or a socket is refused before it is
/// opened). Answers as an origin server would: 200 with `Last-Modified`
/// and an `ETag` made of the modification time and size, 304 for a
/// request whose validators match, 404 for a missing file. Files are
/// read on its owner's blocking-I/O threads.
struct LocalFileLoader: Sendable {
    /// The root's real path, without a trailing slash.
    let root: String
    /// The most bytes a file may have.
    let maximumSize: Int
    /// The threads files are read on.
    let threads: PriorityThreadPool

    /// A loader for files under `root`, read on `threads`; nil if `root` is not a folder.
    init?(root: String, maximumSize: Int, threads: PriorityThreadPool) {
        guard let real = Self.realPath(root), Self.isDirectory(real) else { return nil }
        self.root = real == "/" ? "" : real
        self.maximumSize = maximumSize
        self.threads = threads
    }

    /// Whether `root` is a folder a loader can read under.
    static func isFolder(_ root: String) -> Bool { realPath(root).map(isDirectory) ?? false }

    func load(_ request: DataRequest) async throws(DataLoadingError) -> DataLoadingResponse {
        let url = request.url
        let relative = SourcePolicy.localPath(of: url)
        let result = await threads.run { [root, maximumSize] in
            Self.read(root + relative, under: root, maximumSize: maximumSize, headers: request.headers, url: url)
        }
        return try result.get()
    }

    /// The file at `path`, or why not.
    private static func read(
        _ path: String, under root: String, maximumSize: Int, headers: HTTPFields, url: URL
    ) -> Result<DataLoadingResponse, DataLoadingError> {
        func refused(_ reason: String) -> Result<DataLoadingResponse, DataLoadingError> {
            .failure(DataLoadingError(.refused(reason), url: url))
        }
        guard let real = realPath(path) else {
            return errno == ENOENT || errno == ENOTDIR
                ? .success(DataLoadingResponse(data: Data(), statusCode: 404, url: url))
                : refused("cannot resolve the path: \(String(cString: strerror(errno)))")
        }
        guard real.hasPrefix(root + "/") else { return refused("the path leads outside the local root") }
        var status = stat()
        guard stat(real, &status) == 0 else { return refused("cannot read the file's status") }
        guard status.st_mode & S_IFMT == S_IFREG else { return refused("not a regular file") }
        let validators = Self.validators(of: status)
        if ConditionalRequest(headers).isCurrent(etag: validators.etag, lastModified: validators.lastModified) {
            return .success(DataLoadingResponse(data: Data(), statusCode: 304, headers: validators.fields, url: url))
        }
        guard Int(status.st_size) <= maximumSize else { return .failure(DataLoadingError(.responseTooLarge(limit: maximumSize), url: url)) }
        // O_NONBLOCK: a FIFO put in the file's place since is not waited on;
        // O_NOFOLLOW: nor is a symbolic link followed there.
        let descriptor = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return refused("cannot open the file: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG, opened.st_ino == status.st_ino, opened.st_dev == status.st_dev
        else {
            return refused("the file changed while it was opened")
        }
        let size = Int(opened.st_size)
        guard size <= maximumSize else { return .failure(DataLoadingError(.responseTooLarge(limit: maximumSize), url: url)) }
        var data = Data(count: size)
        var total = 0
        let failed = data.withUnsafeMutableBytes { buffer -> Bool in
            while total < size {
                let count = Glibc.read(descriptor, buffer.baseAddress! + total, size - total)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return count < 0 }
                total += count
            }
            return false
        }
        guard !failed else { return refused("cannot read the file: \(String(cString: strerror(errno)))") }
        // A file that shrank while it was read is answered as far as it went.
        data.count = total
        return .success(DataLoadingResponse(data: data, statusCode: 200, headers: validators.fields, url: url))
    }

    /// `Last-Modified`, and an `ETag` of the modification time (to the
    /// nanosecond) and size; `Cache-Control: no-cache`, so that every use
    /// asks again (a `stat`, and a 304 when nothing changed).
    private static func validators(of status: stat) -> (etag: String, lastModified: String, fields: HTTPFields) {
        let seconds = Int(status.st_mtim.tv_sec)
        let etag = "\"\(String(seconds, radix: 16))-\(String(Int(status.st_mtim.tv_nsec), radix: 16))-\(String(Int(status.st_size), radix: 16))\""
        let lastModified = HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(seconds)))
        return (etag, lastModified, [.eTag: etag, .lastModified: lastModified, .cacheControl: "no-cache"])
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }
}
