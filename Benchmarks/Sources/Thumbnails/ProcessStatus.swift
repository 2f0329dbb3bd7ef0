import Foundation

/// What Linux reports about this process and the machine, from /proc.
enum ProcessStatus {
    /// A field of /proc/self/status in MB (the kernel reports kB): `VmHWM`
    /// (the peak resident set) or `VmRSS` (the current one); `nil` where
    /// there is no /proc.
    static func megabytes(_ field: String) -> Double? {
        guard let status = read("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            // "VmHWM:\t  181234 kB"
            let kilobytes = line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Double($0) }
            return kilobytes.map { $0 / 1024 }
        }
        return nil
    }

    /// Resets VmHWM to the current resident set (Linux 4.0 and later), so
    /// that a later reading is the peak of what ran in between.
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// The 1, 5 and 15 minute load averages, as /proc/loadavg prints them.
    static var loadAverage: String {
        let text = read("/proc/loadavg") ?? "unknown"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// A /proc file's text. Their size shows as 0, so they are read to the end
    /// rather than by size, as `String(contentsOfFile:)` does.
    private static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return (try? handle.readToEnd()).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// A reading such as "peak 181 MB, now 160 MB".
    static var memory: String {
        func format(_ value: Double?) -> String { value.map { String(format: "%.0f MB", $0) } ?? "unknown" }
        return "peak (VmHWM) \(format(megabytes("VmHWM"))), now (VmRSS) \(format(megabytes("VmRSS")))"
    }
}

/// The CPU time the calling thread has used, in seconds: unlike the wall
/// clock, it does not count the time other processes on a busy machine take
/// the core away, so a per-core rate from it holds while another build runs.
enum ThreadClock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
