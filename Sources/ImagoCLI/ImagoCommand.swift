import ArgumentParser

/// The `imago` command-line tool.
@main
struct ImagoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imago",
        abstract: "Imago: an image pipeline with a memory cache and a crash-safe disk cache.",
        discussion: """
            Exit codes: 0 success; 1 a load, a check or an operation failed (the rest was done); \
            2 the cache folder cannot be used (in use by another process, no permission, disk full); \
            64 bad usage.
            """,
        subcommands: [DemoCommand.self, FetchCommand.self, CacheCommand.self, ServeCommand.self, HealthCommand.self],
        defaultSubcommand: DemoCommand.self
    )
}
