import Crypto
import Foundation

/// The keys that sign image URLs: HMAC-SHA256 of the salt followed by the
/// path, unpadded base64url, as imgproxy signs them (its client libraries
/// work unchanged). Several key and salt pairs are accepted at once, so keys
/// can be rotated without breaking the URLs already handed out.
public struct URLSigning: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// One key and its salt; its descriptions never show them.
    public struct Pair: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
        public var key: [UInt8]
        public var salt: [UInt8]

        public init(key: [UInt8], salt: [UInt8]) {
            self.key = key
            self.salt = salt
        }

        public var description: String { "key and salt (hidden)" }
        public var debugDescription: String { description }
    }

    public var description: String { "URLSigning(\(pairs.count) key pair\(pairs.count == 1 ? "" : "s"))" }
    public var debugDescription: String { description }

    /// The pairs, the first one used to sign.
    public var pairs: [Pair]

    public init(pairs: [Pair]) {
        self.pairs = pairs
    }

    /// Pairs from the `IMAGO_KEY` and `IMAGO_SALT` form: hex strings,
    /// comma-separated, the n-th key with the n-th salt.
    public init(hexKeys: String, hexSalts: String) throws(SigningError) {
        let keys = hexKeys.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let salts = hexSalts.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard keys.count == salts.count else { throw .keyCountMismatch(keys: keys.count, salts: salts.count) }
        var pairs: [Pair] = []
        for (index, (key, salt)) in zip(keys, salts).enumerated() {
            guard let keyBytes = Self.bytes(hex: key), !keyBytes.isEmpty else { throw .notHex(what: "key", index: index + 1) }
            guard let saltBytes = Self.bytes(hex: salt) else { throw .notHex(what: "salt", index: index + 1) }
            pairs.append(Pair(key: keyBytes, salt: saltBytes))
        }
        self.pairs = pairs
    }

    /// The signature segment for `path` (everything after the signature
    /// segment, its leading "/" included), made with the first pair.
    public func signature(for path: String) -> String {
        guard let pair = pairs.first else { return "" }
        return Self.base64URL(Self.mac(pair, path))
    }

    /// Whether `signature` signs `path` under any pair. Every pair is
    /// compared, each in constant time, so the time taken says nothing
    /// about which pair or how many bytes matched.
    public func isValid(signature: String, for path: String) -> Bool {
        guard let given = Self.bytes(base64URL: signature), given.count == SHA256.byteCount else { return false }
        var valid = false
        for pair in pairs {
            let expected = Self.mac(pair, path)
            var difference: UInt8 = 0
            for (a, b) in zip(expected, given) { difference |= a ^ b }
            valid = valid || difference == 0
        }
        return valid
    }

    private static func mac(_ pair: Pair, _ path: String) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: pair.key))
        hmac.update(data: pair.salt)
        hmac.update(data: Array(path.utf8))
        return Array(hmac.finalize())
    }

    /// `bytes` as unpadded base64url.
    public static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of base64url text, padded or not; nil for anything else.
    public static func bytes(base64URL text: some StringProtocol) -> [UInt8]? {
        // A byte loop: Foundation's decoder needs three string
        // replacements first, and both are slow on every request.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3 / 4)
        var pending: UInt32 = 0
        var pendingBits = 0
        var padded = false
        for character in text.utf8 {
            if character == UInt8(ascii: "=") {
                padded = true
                continue
            }
            guard !padded, let value = sextet(character) else { return nil }
            pending = pending << 6 | UInt32(value)
            pendingBits += 6
            if pendingBits >= 8 {
                pendingBits -= 8
                bytes.append(UInt8(truncatingIfNeeded: pending >> UInt32(pendingBits)))
            }
        }
        // One character alone past a group of four carries no whole byte.
        return pendingBits < 6 ? bytes : nil
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// The value of one hexadecimal digit, either case.
    static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Why signing keys could not be read.
public enum SigningError: Error, Equatable, CustomStringConvertible {
    case keyCountMismatch(keys: Int, salts: Int)
    case notHex(what: String, index: Int)

    public var description: String {
        switch self {
        case .keyCountMismatch(let keys, let salts): "IMAGO_KEY has \(keys) keys but IMAGO_SALT has \(salts) salts"
        case .notHex(let what, let index): "\(what) \(index) is not hex"
        }
    }
}
