import Foundation

/// A command run to its end, with the CPU time the kernel counted for it
/// alone (wait4's rusage).
enum ChildProcess {
    struct Usage {
        var cpuSeconds: Double
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `executable` with `arguments`, its output discarded; throws
    /// unless it exits with status 0.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Usage {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // gifsicle warns on stderr about local colour tables: not our output.
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(description: "\(executable) did not start: error \(spawned)") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw Failure(description: "waiting for \(executable): error \(errno)") }
        }
        // Exited normally with status 0.
        guard status & 0x7F == 0, status >> 8 & 0xFF == 0 else {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) failed: wait status \(status)")
        }
        return Usage(cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }

    /// The peak resident memory of `executable` run with `arguments`, as GNU
    /// time reports it. Not from wait4: a child started by posix_spawn
    /// shares this process's memory until it execs, and Linux counts that
    /// memory's peak as the child's.
    static func peakResidentMiB(_ executable: String, _ arguments: [String], in folder: URL) throws -> Double {
        let report = folder.appendingPathComponent("time-report.txt")
        try run("/usr/bin/time", ["-f", "%M", "-o", report.path, executable] + arguments)
        let kilobytes = try String(contentsOf: report, encoding: .utf8).split(separator: "\n").last.flatMap { Double($0) }
        guard let kilobytes else { throw Failure(description: "GNU time reported no peak memory for \(executable)") }
        return kilobytes / 1024
    }

    private static func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
}
