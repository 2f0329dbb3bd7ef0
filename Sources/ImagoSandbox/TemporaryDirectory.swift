import Foundation

/// A fresh folder under the system's temporary directory, removed when the
/// value is released: for tests and benchmarks.
public final class TemporaryDirectory: Sendable {
    /// The folder's path.
    public let path: String

    /// Creates `<tmp>/<label>-<UUID>`.
    public init(_ label: String = "imago-tests") {
        path = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` inside the folder.
    public func appending(_ name: String) -> String {
        path + "/" + name
    }
}
