import Foundation

/// The memory this process may use, as Linux limits it: the tightest of
/// its control group's limits (cgroup v2 `memory.max` and `memory.high`,
/// cgroup v1 `memory.limit_in_bytes`, each up the hierarchy) and the
/// machine's physical memory. In a container with a 512 MiB limit on a
/// 64 GiB host this is 512 MiB, not 64 GiB.
public struct MemoryBudget: Sendable, Equatable, CustomStringConvertible {
    /// The budget in bytes.
    public var bytes: UInt64
    /// Where it comes from: a cgroup file's path, or "physical memory".
    public var source: String

    /// The budget of this process.
    public static let current = MemoryBudget(
        cgroupList: (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? "",
        cgroupRoot: "/sys/fs/cgroup",
        physicalMemory: ProcessInfo.processInfo.physicalMemory
    )

    /// The budget a process in the groups `cgroupList` (the text of
    /// `/proc/self/cgroup`) gets on a machine with `physicalMemory` bytes,
    /// reading the limits under `cgroupRoot` (tests pass a folder of their own).
    public init(cgroupList: String, cgroupRoot: String, physicalMemory: UInt64) {
        var budget = (bytes: physicalMemory, source: "physical memory")
        for (path, files) in Self.limitFiles(cgroupList: cgroupList, cgroupRoot: cgroupRoot) {
            for file in files {
                if let limit = Self.readLimit(path + "/" + file), limit < budget.bytes { budget = (limit, path + "/" + file) }
            }
        }
        bytes = budget.bytes
        source = budget.source
    }

    public var description: String { "\(bytes >> 20) MiB (\(source))" }

    /// Each cgroup folder from the process's own group up to the root, with
    /// the limit files to read there. A line of `/proc/self/cgroup` is
    /// `0::/path` for cgroup v2 and `N:memory:/path` (controllers
    /// comma-separated) for the v1 memory controller.
    static func limitFiles(cgroupList: String, cgroupRoot: String) -> [(String, [String])] {
        var folders: [(String, [String])] = []
        for line in cgroupList.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2].hasPrefix("/") else { continue }
            let base: String
            let files: [String]
            if fields[0] == "0", fields[1].isEmpty {
                (base, files) = (Self.unifiedRoot(cgroupRoot), ["memory.max", "memory.high"])
            } else if fields[1].split(separator: ",").contains("memory") {
                (base, files) = (cgroupRoot + "/memory", ["memory.limit_in_bytes"])
            } else {
                continue
            }
            var components = fields[2].split(separator: "/").map(String.init)
            while true {
                folders.append(((([base] + components).joined(separator: "/")), files))
                guard !components.isEmpty else { break }
                components.removeLast()
            }
        }
        return folders
    }

    /// The cgroup v2 mount: the root itself, or `unified` below it on a
    /// hybrid system (v1 controllers with a v2 tree beside them).
    static func unifiedRoot(_ cgroupRoot: String) -> String {
        FileManager.default.fileExists(atPath: cgroupRoot + "/cgroup.controllers") ? cgroupRoot : cgroupRoot + "/unified"
    }

    /// A limit file's value; nil for "max", a missing file or v1's "no
    /// limit" (a page-rounded Int64.max).
    static func readLimit(_ path: String) -> UInt64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let value = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0, value < UInt64(Int64.max) - (1 << 20)
        else { return nil }
        return value
    }
}
