import Foundation

/// Executables of this package that tests run as child processes (the
/// crash tests' torture child, the example app, the `imago` command):
/// built next to the test binary, found from wherever it runs.
public enum BuiltExecutable {
    /// The path of the executable `name` built beside this process, if any.
    public static func path(_ name: String) -> String? {
        let folders = [
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent(),
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        return folders.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
