import Foundation
import Testing

@testable import ImagoServer

@Suite("Image URLs: signing, options, the path's layout")
struct URLAndOptionsTests {
    /// Signatures computed independently with Python's hmac module, as
    /// imgproxy's example scripts compute them.
    static let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
    static let vectors = [
        ("/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png", "90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40"),
        ("/w:256/fit:crop/plain/http%3A%2F%2F127.0.0.2%3A8080%2Fa.jpg", "Ym6MCm5604pnEpNUwQsE5MtLX0D6GluO-M6WW8IQH2s"),
    ]

    @Test("signatures match imgproxy's scheme; tampered, truncated and foreign ones fail")
    func signing() throws {
        let signing = try URLSigning(hexKeys: Self.key, hexSalts: Self.salt)
        for (path, signature) in Self.vectors {
            #expect(signing.signature(for: path) == signature)
            #expect(signing.isValid(signature: signature, for: path))
            // A tampered path, a tampered signature, a truncated one, padding, garbage.
            #expect(!signing.isValid(signature: signature, for: path + "x"))
            #expect(!signing.isValid(signature: signature, for: String(path.dropLast())))
            var flipped = Array(signature)
            flipped[5] = flipped[5] == "A" ? "B" : "A"
            #expect(!signing.isValid(signature: String(flipped), for: path))
            #expect(!signing.isValid(signature: String(signature.dropLast(2)), for: path))
            #expect(!signing.isValid(signature: "unsafe", for: path))
            #expect(!signing.isValid(signature: "", for: path))
        }
        // Padded base64url is the same signature.
        let (path, signature) = Self.vectors[0]
        #expect(signing.isValid(signature: signature + "=", for: path))
    }

    @Test("base64url decodes what Foundation decodes, padded or not, over random bytes; anything else is refused")
    func base64URL() {
        var generator = SystemRandomNumberGenerator()
        for count in 0..<200 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let standard = Data(bytes).base64EncodedString()
            let url = URLSigning.base64URL(bytes)
            #expect(
                url
                    == standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                        of: "=", with: ""))
            #expect(URLSigning.bytes(base64URL: url) == bytes, "\(url)")
            #expect(URLSigning.bytes(base64URL: url + String(repeating: "=", count: (4 - url.count % 4) % 4)) == bytes)
        }
        for bad in ["a", "abcde", "ab=c", "ab+c", "ab/c", "ab c", "é", "abc\u{0}"] {
            #expect(URLSigning.bytes(base64URL: bad) == nil, "\(bad)")
        }
    }

    @Test("the keys never show in descriptions or logs")
    func secretsHidden() throws {
        let signing = try URLSigning(hexKeys: "\(Self.key),0011", hexSalts: "\(Self.salt),")
        for text in ["\(signing)", String(reflecting: signing), "\(signing.pairs[0])", String(reflecting: signing.pairs[0])] {
            #expect(!text.contains("148") && !text.contains("943b"), "\(text)")
        }
        #expect("\(signing)" == "URLSigning(2 key pairs)")
    }

    @Test("rotation: every pair verifies, the first signs")
    func rotation() throws {
        let old = try URLSigning(hexKeys: "0011", hexSalts: "")
        let new = try URLSigning(hexKeys: Self.key, hexSalts: Self.salt)
        let both = try URLSigning(hexKeys: "\(Self.key),0011", hexSalts: "\(Self.salt),")
        let path = "/w:10/plain/http://127.0.0.2/a.png"
        #expect(both.isValid(signature: old.signature(for: path), for: path))
        #expect(both.isValid(signature: new.signature(for: path), for: path))
        #expect(both.signature(for: path) == new.signature(for: path))
        #expect(!new.isValid(signature: old.signature(for: path), for: path))
        #expect(throws: SigningError.keyCountMismatch(keys: 2, salts: 1)) { try URLSigning(hexKeys: "00,11", hexSalts: "22") }
        #expect(throws: SigningError.notHex(what: "key", index: 1)) { try URLSigning(hexKeys: "xyz0", hexSalts: "") }
        #expect(throws: SigningError.notHex(what: "salt", index: 1)) { try URLSigning(hexKeys: "00", hexSalts: "0") }
    }

    @Test("paths: base64url or plain sources, options between, what the signature covers")
    func paths() throws {
        let source = "https://images.example.com/photos/a b.jpg?x=1&y=2"
        let encoded = URLSigning.base64URL(Array(source.utf8))
        let path = try ImageURLPath("/SIG/w:256/h:100/\(encoded)")
        #expect(path.signature == "SIG")
        #expect(path.signedPath == "/w:256/h:100/\(encoded)")
        #expect(path.options == ["w:256", "h:100"])
        #expect(path.source == source)

        let plain = try ImageURLPath("/unsafe/rt:fill/plain/https%3A%2F%2Fimages.example.com%2Fa%20b.jpg%3Fx%3D1")
        #expect(plain.options == ["rt:fill"])
        #expect(plain.source == "https://images.example.com/a b.jpg?x=1")
        // Slashes may stay unencoded after plain/.
        #expect(try ImageURLPath("/unsafe/plain/http://127.0.0.2:9/dir/a.png").source == "http://127.0.0.2:9/dir/a.png")

        for bad in ["", "/", "/sig", "/sig/", "/sig/w:10/plain/", "/sig/w:10/not*base64", "/sig/plain/%zz"] {
            #expect(throws: PathError.self, "\(bad)") { try ImageURLPath(bad) }
        }
    }

    @Test(
        "plain sources: every escape decoded to its byte, malformed escapes and bytes that are not UTF-8 refused; as Foundation decodes, but for two quirks of its own"
    )
    func percentDecoding() {
        var generator = SystemRandomNumberGenerator()
        // Pieces of text and the bytes they stand for; nil: a malformed
        // escape, whatever follows it (a cut-off "%2" only at the end, where
        // no following "a" can complete it).
        let pieces: [(String, [UInt8]?)] = [
            ("%g", nil), ("%zz", nil), ("%2g", nil), ("%E2%82%AC", [0xE2, 0x82, 0xAC]), ("%C3", [0xC3]), ("%2F", [0x2F]),
            ("a", [0x61]), ("é", [0xC3, 0xA9]), ("+", [0x2B]), (" ", [0x20]), ("%25", [0x25]), ("%FF", [0xFF]), ("%c3%a9", [0xC3, 0xA9]),
        ]
        for _ in 0..<5_000 {
            var text = ""
            var bytes: [UInt8]? = []
            for _ in 0..<Int.random(in: 0...8, using: &generator) {
                let (piece, meaning): (String, [UInt8]?)
                if Bool.random(using: &generator) {
                    (piece, meaning) = pieces.randomElement(using: &generator)!
                } else {
                    let byte = UInt8.random(in: 0...255, using: &generator)
                    (piece, meaning) = (String(format: "%%%02X", byte), [byte])
                }
                text += piece
                bytes = bytes.flatMap { bytes in meaning.map { bytes + $0 } }
            }
            if Int.random(in: 0..<10, using: &generator) == 0 {
                text += Bool.random(using: &generator) ? "%" : "%2"
                bytes = nil
            }
            let expected = bytes.flatMap { String(validating: $0, as: UTF8.self) }
            #expect(ImageURLPath.percentDecoded(text) == expected, "\(text)")
            // Foundation agrees wherever its quirks (below) do not apply.
            if let expected, !expected.hasPrefix("\u{FEFF}") {
                #expect(text.removingPercentEncoding == expected, "\(text)")
            }
        }
        // Foundation on Linux answers U+FFFD for a lone 0xA9 (other stray
        // bytes are nil, as here) and drops a leading byte order mark.
        #expect(ImageURLPath.percentDecoded("%A9") == nil)
        #expect(ImageURLPath.percentDecoded("%EF%BB%BFa") == "\u{FEFF}a")
    }
}
