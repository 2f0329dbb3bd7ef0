import Crypto
import Foundation

/// The key that signs thumbor URLs: HMAC-SHA1 of the path after the
/// signature segment (as sent, percent-encoding included, no leading
/// slash, no query), URL-safe base64 with its `=` padding, as thumbor and
/// its client libraries sign them. Kept apart from imgproxy's keys.
public struct ThumborSigning: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let key: SymmetricKey

    /// A signer with thumbor's `SECURITY_KEY`, taken as its UTF-8 bytes.
    public init(key: String) {
        self.key = SymmetricKey(data: Array(key.utf8))
    }

    public var description: String { "ThumborSigning(key hidden)" }
    public var debugDescription: String { description }

    /// The signature segment for `signedText`.
    public func signature(for signedText: some StringProtocol) -> String {
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(signedText.utf8), using: key)
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// Whether `signature` (percent-decoded) signs `signedText`, compared
    /// in constant time.
    public func isValid(signature: String, for signedText: some StringProtocol) -> Bool {
        let expected = Array(self.signature(for: signedText).utf8)
        let given = Array(signature.utf8)
        guard given.count == expected.count else { return false }
        return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
