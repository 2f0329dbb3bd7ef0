import Foundation

/// A fresh folder under the system's temporary directory, removed when the
/// value is released.
final class TemporaryFolder: Sendable {
    let path: String

    init(_ label: String = "imago-server-tests") {
        path = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
