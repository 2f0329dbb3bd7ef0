import ArgumentParser

/// The `imago` command-line tool.
@main
struct ImagoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imago",
        abstract: "Imago: an image pipeline with a memory cache and a crash-safe disk cache.",
        discussion: """
            Exit codes: 0 success, 1 a check or an operation failed, 64 bad usage.
            """,
        subcommands: [CacheDemoCommand.self],
        defaultSubcommand: CacheDemoCommand.self
    )
}
