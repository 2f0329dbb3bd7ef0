import Foundation
import ImagoConcurrency

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests and the tools
/// they run. Foundation's `Process` is not used: on Linux it lists
/// `/proc/self/fd` copying each entry's whole name field, past the end of
/// readdir's buffer, and crashed a test run while a test held a thousand
/// connections open. Here the child closes every descriptor from 3 up with
/// glibc's `posix_spawn_file_actions_addclosefrom_np`, so no child holds
/// another's pipe or a test's socket.
public final class Subprocess: Sendable {
    /// Where the child's standard error goes.
    public enum Errors: Sendable {
        /// `/dev/null`.
        case discarded
        /// A pipe of its own, read through ``errors``.
        case piped
        /// The standard output's pipe, read through ``output`` with it.
        case merged
    }

    /// How the child ended: its exit code, or the signal that killed it.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let code): "exit code \(code)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// Why a child could not be started.
    public struct LaunchError: Error, CustomStringConvertible {
        public let executable: String
        public let errno: Int32
        public var description: String { "cannot start \(executable): \(String(cString: strerror(errno)))" }
    }

    public let processIdentifier: pid_t
    /// The read end of the child's standard output (and of its standard
    /// error, when ``Errors/merged``); nil when it was discarded.
    public let output: FileHandle?
    /// The read end of the child's standard error, when ``Errors/piped``.
    public let errors: FileHandle?
    private let termination = Locked<Termination?>(nil)

    /// Starts `executable` (a path) with `arguments`, in `environment`
    /// (nil: this process's), its standard input `/dev/null`, its standard
    /// output piped to ``output`` when `pipesOutput`, else `/dev/null`.
    public init(
        _ executable: String, arguments: [String], environment: [String: String]? = nil, pipesOutput: Bool = true, errors: Errors = .discarded
    ) throws(LaunchError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = []
        defer { for end in childEnds { close(end) } }
        func pipeTo(_ target: Int32) throws(LaunchError) -> FileHandle {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw LaunchError(executable: executable, errno: Glibc.errno) }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            childEnds.append(ends[1])
            posix_spawn_file_actions_adddup2(&actions, ends[1], target)
            return FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        let output = pipesOutput ? try pipeTo(STDOUT_FILENO) : nil
        if output == nil { posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0) }
        switch errors {
        case .discarded:
            posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
            self.errors = nil
        case .piped:
            self.errors = try pipeTo(STDERR_FILENO)
        case .merged:
            posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
            self.errors = nil
        }
        if let addCloseFrom = Self.addCloseFrom { _ = addCloseFrom(&actions, 3) }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for argument in argv + envp { free(argument) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard status == 0 else { throw LaunchError(executable: executable, errno: status) }
        processIdentifier = pid
        self.output = output
    }

    /// Sends `signal` to the child, unless it has been waited for.
    public func send(_ signal: Int32) {
        termination.withLock { ended in if ended == nil { _ = kill(processIdentifier, signal) } }
    }

    /// Blocks until the child ends (at once if it has), and says how.
    @discardableResult
    public func wait() -> Termination {
        if let ended = termination.withLock({ $0 }) { return ended }
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) == -1, errno == EINTR {}
        let ended: Termination = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
        termination.withLock { $0 = ended }
        return ended
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool {
        if termination.withLock({ $0 }) != nil { return false }
        var status: Int32 = 0
        guard waitpid(processIdentifier, &status, WNOHANG) == processIdentifier else { return true }
        termination.withLock { $0 = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F) }
        return false
    }

    /// Runs `executable` to its end, its standard output and error read
    /// together, and returns them with how it ended.
    public static func run(_ executable: String, arguments: [String]) throws(LaunchError) -> (Data, Termination) {
        let child = try Subprocess(executable, arguments: arguments, errors: .merged)
        // Read to the end before waiting, so that a full pipe cannot stall the child.
        let printed = child.output?.readDataToEndOfFile() ?? Data()
        return (printed, child.wait())
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later),
    /// which its Swift module does not declare; without it, a child keeps
    /// the descriptors not marked close-on-exec.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"
    ).map { unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self) }
}
