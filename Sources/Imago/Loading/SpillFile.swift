import Foundation
import ImagoConcurrency
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where a body of unknown length goes once it outgrows memory: a temporary
/// file, unlinked as soon as it is created (a crash leaves nothing behind),
/// written on the blocking-I/O threads and mapped back read-only when the
/// body is whole. A body sent without Content-Length then costs its size in
/// disk, not in memory, until it is refused at the size limit or complete.
final class SpillFile: Sendable {
    private let descriptor: Int32
    /// Where it was created, for errors.
    let path: String

    /// The threads its writes run on.
    private let threads: PriorityThreadPool

    private init(descriptor: Int32, path: String, threads: PriorityThreadPool) {
        self.descriptor = descriptor
        self.path = path
        self.threads = threads
    }

    deinit { _ = Glibc.close(descriptor) }

    /// Creates the file in `directory` and unlinks it, on `threads`.
    static func create(in directory: String, threads: PriorityThreadPool, on eventLoop: any EventLoop) -> EventLoopFuture<SpillFile> {
        threads.future(on: eventLoop) {
            var template = Array((directory + "/imago-body-XXXXXX").utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard descriptor >= 0 else { throw SpillError(call: "mkstemp", path: path, code: errno) }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            unlink(path)
            return SpillFile(descriptor: descriptor, path: path, threads: threads)
        }
    }

    /// Writes `bytes` at `offset`, on its threads.
    func write(_ bytes: ByteBuffer, at offset: Int, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        threads.future(on: eventLoop) { [self] in
            try bytes.withUnsafeReadableBytes { try write($0, at: offset) }
        }
    }

    /// Writes `bytes` at `offset`, on its threads.
    func write(_ bytes: Data, at offset: Int, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        threads.future(on: eventLoop) { [self] in
            try bytes.withUnsafeBytes { try write($0, at: offset) }
        }
    }

    private func write(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws {
        var done = 0
        while done < buffer.count, let base = buffer.baseAddress {
            let n = pwrite(descriptor, base + done, buffer.count - done, off_t(offset + done))
            if n >= 0 {
                done += n
            } else if errno != EINTR {
                throw SpillError(call: "pwrite", path: path, code: errno)
            }
        }
    }

    /// The first `count` bytes, mapped read-only: pages the kernel can drop
    /// and read again, not memory of the process's own.
    func mapped(count: Int) throws -> Data {
        guard count > 0 else { return Data() }
        guard let address = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw SpillError(call: "mmap", path: path, code: errno)
        }
        return Data(bytesNoCopy: address, count: count, deallocator: .custom { address, count in munmap(address, count) })
    }
}

/// A failed system call on a ``SpillFile``.
struct SpillError: Error, CustomStringConvertible {
    var call: String
    var path: String
    var code: Int32

    var description: String { "\(call) failed on \(path): \(String(cString: strerror(code)))" }
}

extension PriorityThreadPool {
    /// Runs `body` on one of the threads; its result completes the future on `eventLoop`.
    fileprivate func future<T: Sendable>(on eventLoop: any EventLoop, _ body: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        let promise = eventLoop.makePromise(of: T.self)
        submit(priority: .normal) { promise.completeWith(Result { try body() }) }
        return promise.futureResult
    }
}
