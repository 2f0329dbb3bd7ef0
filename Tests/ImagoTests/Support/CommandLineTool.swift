import Foundation
import ImagoSandbox

/// A command-line tool from Debian's packages: run on encoded bytes, to check
/// the encoders' output with a reader other than our own decoders
/// (`webpmux` from `webp`, `gifsicle`), or to make test images (`jpgicc`, `tificc`
/// and `tificc` from `liblcms2-utils`); scripts/install-dependencies.sh installs them.
struct CommandLineTool {
    /// Why a run failed: the tool is missing, or it exited with an error.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The tool's path.
    let path: String

    static let webpmux = CommandLineTool(path: "/usr/bin/webpmux")
    static let gifsicle = CommandLineTool(path: "/usr/bin/gifsicle")
    static let jpgicc = CommandLineTool(path: "/usr/bin/jpgicc")
    static let tificc = CommandLineTool(path: "/usr/bin/tificc")

    /// What the tool prints (standard output and standard error) when run
    /// with `arguments` before the path of a file holding `data`.
    func output(_ arguments: [String], on data: Data, fileExtension: String) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imago-\(UUID().uuidString).\(fileExtension)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try run(arguments + [file.path])
    }

    /// What the tool prints (standard output and standard error) when run
    /// with `arguments`; throws unless it exits with 0.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure(description: "\(path) is missing: scripts/install-dependencies.sh installs it")
        }
        let (printed, ended) = try Subprocess.run(path, arguments: arguments)
        let text = String(decoding: printed, as: UTF8.self)
        guard ended == .exited(0) else {
            throw Failure(description: "\(path) \(arguments.joined(separator: " ")) ended with \(ended): \(text)")
        }
        return text
    }
}
