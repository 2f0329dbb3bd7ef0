/// HTTP field names compared as HTTP compares them: ASCII letters without
/// regard to case, every other byte exactly. Foundation's
/// `caseInsensitiveCompare` goes through NSString and Unicode folding, and
/// cost about 1% of a served result-cache hit.
package enum FieldName {
    /// Whether `a` and `b` name the same field.
    package static func matches(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in
                a.count == b.count && zip(a, b).allSatisfy { lowered($0) == lowered($1) }
            }
        }
    }

    @inline(__always)
    private static func lowered(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
