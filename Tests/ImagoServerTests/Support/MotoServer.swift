import Foundation
import Imago
import ImagoSandbox
import Testing

@testable import ImagoServer

/// moto's S3 server on a loopback port the system picks, filled by
/// `scripts/s3_fixture.py` with boto3: a bucket of objects, and an access
/// key for them; every request after the fixture's has its signature
/// checked. The virtual environment is `IMAGO_MOTO_VENV` (the test command
/// sets it, from `scripts/moto-venv.sh`), else `.build/moto-venv`.
final class MotoServer: Sendable {
    let endpoint: URL
    let credentials: AWSCredentials
    private let process: Subprocess

    static var venv: String? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let venv = ProcessInfo.processInfo.environment["IMAGO_MOTO_VENV"] ?? root + "/.build/moto-venv"
        return FileManager.default.isExecutableFile(atPath: venv + "/bin/moto_server") ? venv : nil
    }

    static var fixtureScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path + "/scripts/s3_fixture.py"
    }

    /// Starts the server and puts `objects` (key: bytes) in `bucket`.
    init(bucket: String, objects: [String: Data]) async throws {
        let venv = try #require(Self.venv, "no moto: run scripts/moto-venv.sh, or set IMAGO_MOTO_VENV")
        // The fixture's calls (3 IAM calls, the bucket, one an object) go unchecked, no more.
        let environment = ProcessInfo.processInfo.environment.merging(["INITIAL_NO_AUTH_ACTION_COUNT": "\(4 + objects.count)"]) { $1 }
        let process = try Subprocess(
            venv + "/bin/moto_server", arguments: ["-H", "127.0.0.1", "-p", "0"], environment: environment, pipesOutput: false, errors: .piped)
        self.process = process
        // Werkzeug says where it listens once it does.
        let errors = try #require(process.errors)
        let line = await Self.firstLine(in: errors) { $0.contains("Running on http://") }
        guard let found = line?.range(of: "http://127.0.0.1:[0-9]+", options: .regularExpression), let endpoint = URL(string: String(line![found]))
        else {
            process.send(SIGKILL)
            throw POSIXError(.ECONNREFUSED)
        }
        self.endpoint = endpoint

        let folder = NSTemporaryDirectory() + "imago-moto-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var arguments = [Self.fixtureScript, endpoint.absoluteString, bucket]
        for (index, (key, data)) in objects.sorted(by: { $0.key < $1.key }).enumerated() {
            let path = folder + "/\(index)"
            try data.write(to: URL(fileURLWithPath: path))
            arguments.append(key + "=" + path)
        }
        let fixture = try Subprocess(venv + "/bin/python", arguments: arguments)
        let json = fixture.output?.readDataToEndOfFile() ?? Data()
        guard fixture.wait() == .exited(0) else {
            process.send(SIGKILL)
            throw POSIXError(.EIO)
        }
        let keys = try JSONDecoder().decode([String: String].self, from: json)
        credentials = AWSCredentials(accessKeyID: keys["accessKeyID"] ?? "", secretAccessKey: keys["secretAccessKey"] ?? "")
    }

    /// Kills the server: it holds nothing worth a clean stop, and Werkzeug
    /// may take its time over SIGTERM while a connection is open.
    func stop() {
        process.send(SIGKILL)
        process.wait()
    }

    /// The first line of `handle` that `matches`, read off a thread of its
    /// own (which reads on to the end); nil if there is none.
    private static func firstLine(in handle: FileHandle, where matches: @escaping @Sendable (String) -> Bool) async -> String? {
        await withCheckedContinuation { continuation in
            Thread {
                var bytes: [UInt8] = []
                var found = false
                while let byte = handle.readData(ofLength: 1).first {
                    // Past the line, the rest (moto's request log) is read and dropped, so that the pipe never fills.
                    guard !found else { continue }
                    guard byte == UInt8(ascii: "\n") else {
                        bytes.append(byte)
                        continue
                    }
                    let line = String(decoding: bytes, as: UTF8.self)
                    if matches(line) {
                        found = true
                        continuation.resume(returning: line)
                    }
                    bytes = []
                }
                if !found { continuation.resume(returning: nil) }
            }.start()
        }
    }
}
