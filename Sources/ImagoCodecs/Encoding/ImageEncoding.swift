import Foundation

/// Turns an ``Image`` into encoded bytes (for storing processed images, or
/// writing a file).
public protocol ImageEncoding: Sendable {
    /// The format produced.
    var format: ImageFormat { get }
    /// Encodes `image`.
    func encode(_ image: Image) throws(ImageEncodingError) -> Data
}

/// Why an encoder failed.
public struct ImageEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The format being written.
    public var format: ImageFormat
    /// The codec's message.
    public var detail: String

    /// Creates an encoding error.
    public init(format: ImageFormat, detail: String) {
        self.format = format
        self.detail = detail
    }

    public var description: String { "encoding \(format) failed: \(detail)" }
}
