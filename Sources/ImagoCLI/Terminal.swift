import Foundation
import ImagoConcurrency

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the CLI writes: results to stdout, errors to stderr (one line each),
/// and a progress bar only when stdout is a terminal.
enum Terminal {
    static let isInteractive = isatty(STDOUT_FILENO) != 0

    /// Writes one line to stderr.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data(("imago: " + message + "\n").utf8))
    }

    /// Prints a table: the first column left-aligned, the others right-aligned.
    static func printTable(header: [String], rows: [[String]]) {
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for line in [header] + rows {
            print(
                line.enumerated().map { column, cell in
                    column == 0
                        ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: widths[column] - cell.count) + cell
                }.joined(separator: "  "))
        }
    }

    /// The default cache folder: `$XDG_CACHE_HOME/imago`, else `~/.cache/imago`.
    static var defaultCacheFolder: String {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/imago" }
        return (environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache/imago"
    }
}

/// The CLI's exit codes, documented in `imago --help`.
enum ExitStatus {
    /// Everything worked.
    static let success: Int32 = 0
    /// At least one load or check failed; the rest was done.
    static let partialFailure: Int32 = 1
    /// The cache folder could not be used (in use by another process, no permission, full).
    static let cacheUnavailable: Int32 = 2
}

/// A one-line progress bar redrawn in place; silent when stdout is not a terminal.
final class ProgressBar: Sendable {
    private struct State {
        var done = 0
        var lastDrawn = ContinuousClock.now - .seconds(1)
    }

    private let state = Locked(State())
    private let total: Int
    private let label: String

    init(label: String, total: Int) {
        self.label = label
        self.total = max(1, total)
    }

    /// Counts one finished item and redraws at most 20 times a second.
    func advance() {
        guard Terminal.isInteractive else { return }
        // Drawn with the lock held, so that lines never interleave.
        state.withLock { state in
            state.done += 1
            let now = ContinuousClock.now
            guard state.done == total || now - state.lastDrawn > .milliseconds(50) else { return }
            state.lastDrawn = now
            draw(done: state.done)
        }
    }

    private func draw(done: Int) {
        let width = 30
        let filled = width * done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        print("\r\(label) [\(bar)] \(done)/\(total)", terminator: done == total ? "\n" : "")
        fflush(nil)
    }
}
