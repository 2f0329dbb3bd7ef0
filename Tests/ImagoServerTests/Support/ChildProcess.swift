import Foundation
import ImagoSandbox
import Testing

/// An executable of this package, built next to the tests, run as a child
/// process whose standard output the test reads.
final class ChildProcess: Sendable {
    private let process: Subprocess

    /// Starts `name` (`ImageHost`, `imago`) with `arguments`, its
    /// environment this process's plus `environment`; its standard error
    /// is read with its output when `readsErrors`, else dropped.
    init(_ name: String, arguments: [String], environment: [String: String] = [:], readsErrors: Bool = false) throws {
        let executable = try #require(BuiltExecutable.path(name), "\(name) was not built next to the tests")
        process = try Subprocess(
            executable, arguments: arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            errors: readsErrors ? .merged : .discarded)
    }

    /// The first line the process prints, read off a thread of its own.
    func firstLine() async throws -> String {
        try await line { _ in true }
    }

    /// The first line the process prints that `matches` takes (log lines
    /// before it are read and dropped); an error if it exits first.
    func line(where matches: @escaping @Sendable (String) -> Bool) async throws -> String {
        let line = await read { handle in
            while true {
                var bytes: [UInt8] = []
                var byte = handle.readData(ofLength: 1).first
                while let next = byte, next != UInt8(ascii: "\n") {
                    bytes.append(next)
                    byte = handle.readData(ofLength: 1).first
                }
                let line = String(decoding: bytes, as: UTF8.self)
                if byte == nil || matches(line) { return line }
            }
        }
        guard !line.isEmpty, matches(line) else { throw CocoaError(.fileReadCorruptFile) }
        return line
    }

    /// Everything the process prints until it exits, and how it ended.
    func allOutput() async -> (String, Subprocess.Termination) {
        let text = await read { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) }
        return (text, process.wait())
    }

    func stop() {
        process.send(SIGTERM)
        process.wait()
    }

    private func read(_ body: @escaping @Sendable (FileHandle) -> String) async -> String {
        guard let handle = process.output else { return "" }
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body(handle)) }.start()
        }
    }
}
