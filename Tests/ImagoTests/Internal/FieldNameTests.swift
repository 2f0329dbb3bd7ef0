import Testing

@testable import Imago

@Suite("FieldName: HTTP field names compared without regard to ASCII case")
struct FieldNameTests {
    @Test("ASCII letters match in either case; other bytes, lengths and non-ASCII letters must be equal")
    func matching() {
        #expect(FieldName.matches("Content-Type", "content-type"))
        #expect(FieldName.matches("ETAG", "ETag"))
        #expect(FieldName.matches("", ""))
        #expect(!FieldName.matches("ETag", "ETags"))
        #expect(!FieldName.matches("X-A", "X_A"))
        // '@' (0x40) and '`' (0x60) differ only in the case bit, but are not letters.
        #expect(!FieldName.matches("a@", "a`"))
        #expect(!FieldName.matches("[", "{"))
        #expect(!FieldName.matches("É", "é"))
    }
}
