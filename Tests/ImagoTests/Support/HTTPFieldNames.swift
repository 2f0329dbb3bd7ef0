import Imago

/// Field names the tests send that HTTP does not define.
extension HTTPField.Name {
    /// A request field that must reach the server as sent.
    static let xToken = HTTPField.Name("X-Token")!
    /// A response field whose size the test chooses.
    static let xPadding = HTTPField.Name("X-Padding")!
}
