import Foundation

/// An encoded image format, recognised from the data's first bytes (never
/// from a file extension or a Content-Type header, which can lie).
public enum ImageFormat: String, Sendable, Hashable, CustomStringConvertible {
    case jpeg, png, gif, webp, avif, heic, jxl, bmp, tiff
    /// Not an image format Imago recognises.
    case unknown

    /// Recognises the format from the first bytes of `data`.
    public init(sniffing data: Data) {
        self = data.withUnsafeBytes { ImageFormat.sniff(UnsafeRawBufferPointer(rebasing: $0.prefix(32))) }
    }

    private static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat {
        func starts(with prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + prefix.count else { return false }
            return prefix.indices.allSatisfy { bytes[offset + $0] == prefix[$0] }
        }
        if starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) { return .gif }
        if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) { return .webp }
        if starts(with: Array("ftyp".utf8), at: 4) {
            let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
            if brand == "avif" || brand == "avis" { return .avif }
            if ["heic", "heix", "hevc", "hevx", "mif1", "msf1"].contains(brand) { return .heic }
        }
        // JPEG XL: a bare codestream, or the ISOBMFF container's signature box.
        if starts(with: [0xFF, 0x0A]) || starts(with: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if starts(with: Array("BM".utf8)) { return .bmp }
        if starts(with: [0x49, 0x49, 0x2A, 0x00]) || starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        return .unknown
    }

    /// A short description of what unrecognised data looks like, for error messages
    /// ("HTML, not an image", "empty data", "JSON").
    public static func describeUnrecognised(_ data: Data) -> String {
        if data.isEmpty { return "empty data" }
        let head = String(decoding: data.prefix(256), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        if head.hasPrefix("<!doctype html") || head.hasPrefix("<html") || head.contains("<body") {
            return "HTML, not an image"
        }
        if head.hasPrefix("<?xml") || head.hasPrefix("<svg") {
            return head.contains("<svg") ? "SVG, which Imago does not rasterise" : "XML, not an image"
        }
        if head.hasPrefix("{") || head.hasPrefix("[") { return "JSON, not an image" }
        let hex = data.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
        return "\(data.count) bytes starting \(hex)"
    }

    public var description: String { rawValue.uppercased() }

    /// The format's media type, for a Content-Type header.
    public var mediaType: String {
        self == .unknown ? "application/octet-stream" : "image/" + rawValue
    }

    /// The usual file name extension.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .unknown: "bin"
        default: rawValue
        }
    }
}
