import ArgumentParser
import Foundation
import Imago

/// `imago cache stats|clear|trim|verify`: look after a disk cache folder.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain a disk cache folder.",
        subcommands: [Stats.self, Clear.self, Trim.self, Verify.self, CacheDemoCommand.self]
    )

    /// The folder option every cache subcommand takes.
    struct Folder: ParsableArguments {
        @Option(name: .customLong("cache"), help: "The cache folder (default: $XDG_CACHE_HOME/imago or ~/.cache/imago).")
        var path: String = Terminal.defaultCacheFolder

        /// Opens the cache, or prints why not and exits with status 2.
        func open() throws -> DiskCache {
            do {
                return try DiskCache(path: path, configuration: .init(maintenanceInterval: nil))
            } catch {
                Terminal.error("\(error)")
                throw ExitCode(ExitStatus.cacheUnavailable)
            }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the number of entries and their size.")
        @OptionGroup var folder: Folder

        func run() throws {
            let cache = try folder.open()
            defer { cache.close() }
            print("folder   \(cache.path)")
            print("entries  \(cache.count)")
            print("size     \(formatBytes(cache.totalSize)) of \(formatBytes(cache.configuration.sizeLimit))")
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var folder: Folder

        func run() throws {
            let cache = try folder.open()
            defer { cache.close() }
            let count = cache.count
            try report { () throws(DiskCacheError) in try cache.removeAll() }
            print("removed \(count) entries")
        }
    }

    struct Trim: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove expired entries, then the least recently used ones until the size fits.")
        @OptionGroup var folder: Folder
        @Option(help: "The size to trim to, in MiB (default: the cache's size limit).")
        var size: Int?

        func run() throws {
            let cache = try folder.open()
            defer { cache.close() }
            let (countBefore, sizeBefore) = (cache.count, cache.totalSize)
            try report { () throws(DiskCacheError) in
                try cache.removeExpired()
                try cache.trim(toSize: size.map { $0 << 20 } ?? cache.configuration.sizeLimit)
            }
            print(
                "removed \(countBefore - cache.count) entries, \(formatBytes(sizeBefore - cache.totalSize)); \(cache.count) left, \(formatBytes(cache.totalSize))"
            )
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Read every entry whole, remove damaged ones, report what was done.")
        @OptionGroup var folder: Folder

        func run() throws {
            let cache = try folder.open()
            defer { cache.close() }
            let report = cache.verify()
            for problem in report.problems { print("removed \(problem)") }
            print(
                "\(report.sound) sound, \(report.removed) damaged and removed (\(formatBytes(Int(report.bytesRemoved)))), \(report.missing) missing files forgotten"
            )
        }
    }
}

/// Runs a cache operation, turning its error into one stderr line and exit status 2.
func report(_ body: () throws(DiskCacheError) -> Void) throws {
    do {
        try body()
    } catch {
        Terminal.error("\(error)")
        throw ExitCode(ExitStatus.cacheUnavailable)
    }
}

/// "12.3 MiB", "512 B".
func formatBytes(_ bytes: Int) -> String {
    let units = ["B", "KiB", "MiB", "GiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024, unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
}
