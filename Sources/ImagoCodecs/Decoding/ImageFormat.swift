import Foundation

/// An encoded image format, recognised from the data's first bytes (never
/// from a file extension or a Content-Type header, which can lie).
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case jpeg, png, gif, webp, avif, heic, jxl, bmp, tiff
    /// Windows icons and cursors (ICO, CUR).
    case ico
    /// SVG: an XML document whose root element is `<svg>` (UTF-8 or
    /// ISO-8859-1; not gzipped SVGZ).
    case svg
    /// Not an image format Imago recognises.
    case unknown

    /// Recognises the format from the first bytes of `data` (for SVG, from
    /// its first element, within the first 64 KiB).
    public init(sniffing data: Data) {
        self = data.withUnsafeBytes { bytes in
            let format = ImageFormat.sniff(UnsafeRawBufferPointer(rebasing: bytes.prefix(32)))
            return format == .unknown && ImageFormat.isSVG(UnsafeRawBufferPointer(rebasing: bytes.prefix(64 << 10))) ? .svg : format
        }
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
        if starts(with: [0, 0, 1, 0]) || starts(with: [0, 0, 2, 0]), isIconDirectory(bytes) { return .ico }
        return .unknown
    }

    /// Whether an ICO or CUR signature starts a plausible directory: at
    /// least one entry, the first with data after the directory and, for an
    /// icon, one plane or none and a usual bit count. Four bytes of zeros,
    /// a one or two and a zero are too common to be taken alone.
    private static func isIconDirectory(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let count = bytes.littleEndian(at: 4, size: 2), count > 0, let length = bytes.littleEndian(at: 14, size: 4),
            let offset = bytes.littleEndian(at: 18, size: 4), length > 0, offset >= 6 + 16 * count
        else { return false }
        guard bytes[2] == 1 else { return true }
        // A cursor keeps its hot spot where an icon has its planes and bit count.
        let planes = bytes.littleEndian(at: 10, size: 2) ?? 0
        let bitCount = bytes.littleEndian(at: 12, size: 2) ?? 0
        return planes <= 1 && [0, 1, 2, 4, 8, 16, 24, 32].contains(bitCount)
    }

    /// Whether the first element of `bytes` is an `<svg>` (with or without
    /// a namespace prefix), after an optional byte order mark, XML
    /// declaration, comments, processing instructions and DOCTYPE. Lenient:
    /// the decoder's reader is the strict one.
    private static func isSVG(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func skip(past terminator: String) -> Bool {
            let needle = Array(terminator.utf8)
            while index + needle.count <= bytes.count {
                if bytes[index..<(index + needle.count)].elementsEqual(needle) {
                    index += needle.count
                    return true
                }
                index += 1
            }
            return false
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "<"), index + 1 < bytes.count else { return false }
            let rest = UnsafeRawBufferPointer(rebasing: bytes[index...])
            if rest.starts(with: Array("<?".utf8)) {
                guard skip(past: "?>") else { return false }
            } else if rest.starts(with: Array("<!--".utf8)) {
                guard skip(past: "-->") else { return false }
            } else if rest.starts(with: Array("<!DOCTYPE".utf8)) {
                // An internal subset may hold `>`: past its `]` first, if it has one.
                let end = rest.firstIndex(of: UInt8(ascii: ">")) ?? rest.count
                if rest[..<end].contains(UInt8(ascii: "[")) { guard skip(past: "]") else { return false } }
                guard skip(past: ">") else { return false }
            } else {
                let name = rest.dropFirst().prefix { $0 > 0x20 && $0 != UInt8(ascii: ">") && $0 != UInt8(ascii: "/") }
                let local = name.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).last
                return local?.elementsEqual("svg".utf8) == true
            }
        }
        return false
    }

    /// The format whose ``mediaType`` is `mediaType`, if Imago knows it.
    public init?(mediaType: String) {
        guard let format = Self.allCases.first(where: { $0 != .unknown && $0.mediaType == mediaType }) else { return nil }
        self = format
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
            return head.contains("<svg") ? "XML that does not start as an SVG document" : "XML, not an image"
        }
        if head.hasPrefix("{") || head.hasPrefix("[") { return "JSON, not an image" }
        let hex = data.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
        return "\(data.count) bytes starting \(hex)"
    }

    public var description: String { rawValue.uppercased() }

    /// The format's media type, for a Content-Type header: `image/`
    /// and the raw value, but for ICO (`image/x-icon`, what browsers and
    /// servers use), SVG (`image/svg+xml`) and unknown data.
    public var mediaType: String {
        switch self {
        case .ico: "image/x-icon"
        case .svg: "image/svg+xml"
        case .unknown: "application/octet-stream"
        default: "image/" + rawValue
        }
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
