import Foundation

/// Searches for ASCII words in text, in any case, byte by byte: the SVG
/// readers look into every attribute of documents of megabytes, and
/// Foundation's string searches go through NSString on Linux, which is
/// far too slow for that.
enum ASCIISearch {
    /// Where `needle` (lowercase ASCII) first starts in `text`'s UTF-8, in
    /// any case, at or after `start`; nil if nowhere.
    static func firstIndex(of needle: String, in text: some StringProtocol, from start: Int = 0) -> Int? {
        let pattern = Array(needle.utf8)
        let search = { (bytes: UnsafeBufferPointer<UInt8>) -> Int? in
            guard let first = pattern.first, bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
            for index in start...(bytes.count - pattern.count) where lowered(bytes[index]) == first {
                var matches = true
                for offset in 1..<pattern.count where lowered(bytes[index + offset]) != pattern[offset] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            return nil
        }
        if let found = text.utf8.withContiguousStorageIfAvailable(search) { return found }
        return Array(text.utf8).withUnsafeBufferPointer(search)
    }

    /// Whether `text` holds `needle` (lowercase ASCII), in any case.
    static func contains(_ needle: String, in text: some StringProtocol) -> Bool {
        firstIndex(of: needle, in: text) != nil
    }

    /// `byte` with an ASCII capital made small.
    static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
