import Crypto
import Foundation

/// Signs HTTP requests with AWS Signature Version 4, in the `Authorization`
/// header, as S3 and S3-compatible stores check them.
///
/// ```swift
/// let signer = SigV4Signer(credentials: credentials, region: "eu-west-1", service: "s3", normalizesPath: false)
/// let signed = signer.sign(method: "GET", path: "/bucket/photo.jpg", headers: [("host", host)], payloadHash: SigV4Signer.emptyPayloadHash, date: .now)
/// // send signed.headers (x-amz-date, x-amz-security-token, authorization) with the request
/// ```
///
/// Every header given is signed; the signer adds `x-amz-date` and, with a
/// session token, `x-amz-security-token`. `path` is the path as it is sent,
/// percent-encoded or not: it is decoded, then encoded the way SigV4
/// canonicalises it (every byte but letters, digits and `-._~` as `%XX`).
struct SigV4Signer: Sendable {
    typealias Credentials = AWSCredentials

    /// What a signature is made of, for tests and for the request.
    struct Signature: Sendable {
        var canonicalRequest: String
        var stringToSign: String
        var signature: String
        /// The fields to send besides the ones given: `x-amz-date`, the
        /// session token if any, and `authorization`.
        var headers: [(name: String, value: String)]

        /// The `authorization` field's value.
        var authorization: String { headers.last { $0.name == "authorization" }?.value ?? "" }
    }

    /// The SHA-256 of no bytes, the payload hash of a GET.
    static let emptyPayloadHash = payloadHash(Data())

    /// The hex SHA-256 of a body, as `x-amz-content-sha256` and the
    /// canonical request carry it.
    static func payloadHash(_ body: Data) -> String { hex(SHA256.hash(data: body)) }

    let credentials: Credentials
    let region: String
    let service: String
    /// Whether `.` and `..` segments and repeated slashes are removed from
    /// the path before signing; S3 signs the key as it is.
    var normalizesPath = true
    /// Whether the session token is signed (it is always sent); STS once
    /// asked for it unsigned.
    var signsSessionToken = true

    /// Signs a request of `method` for `path` and `query` (names and values
    /// as sent, percent-encoded or not) with `headers` (`host` among them;
    /// repeated names are joined in order) and a body whose SHA-256 is
    /// `payloadHash`, at `date`.
    func sign(
        method: String, path: String, query: String = "", headers: [(name: String, value: String)], payloadHash: String, date: Date
    ) -> Signature {
        let (amzDate, day) = Self.timestamps(date)
        var signed = headers
        signed.append(("x-amz-date", amzDate))
        var added = [(name: "x-amz-date", value: amzDate)]
        if let token = credentials.sessionToken {
            added.append(("x-amz-security-token", token))
            if signsSessionToken { signed.append(("x-amz-security-token", token)) }
        }
        let (canonicalHeaders, signedNames) = Self.canonicalHeaders(signed)
        let canonicalRequest = [
            method, Self.canonicalPath(path, normalized: normalizesPath), Self.canonicalQuery(query), canonicalHeaders, signedNames, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        added.append(
            ("authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedNames), Signature=\(signature)")
        )
        return Signature(canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature, headers: added)
    }

    // MARK: - Canonical forms

    /// `20150830T123600Z` and `20150830`, in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        let day = "\(parts.year ?? 1970)\(two(parts.month))\(two(parts.day))"
        return ("\(day)T\(two(parts.hour))\(two(parts.minute))\(two(parts.second))Z", day)
    }

    /// The path decoded, normalised if asked, and encoded segment by segment.
    static func canonicalPath(_ path: String, normalized: Bool) -> String {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).map { percentDecoded(String($0)) }
        if normalized {
            let endsInDirectory = path.hasSuffix("/") || path.hasSuffix("/.") || path.hasSuffix("/..")
            var kept: [[UInt8]] = []
            for segment in segments where !segment.isEmpty && segment != Array(".".utf8) {
                if segment == Array("..".utf8) { _ = kept.popLast() } else { kept.append(segment) }
            }
            segments = [[]] + kept + (endsInDirectory && !kept.isEmpty ? [[]] : [])
        }
        let encoded = segments.map(encode).joined(separator: "/")
        return encoded.isEmpty ? "/" : encoded
    }

    /// The parameters decoded, encoded, and sorted by name, then value.
    static func canonicalQuery(_ query: String) -> String {
        let parameters = query.split(separator: "&").map { parameter -> (name: String, value: String) in
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? String(parts[1]) : ""
            return (encode(percentDecoded(String(parts[0]))), encode(percentDecoded(value)))
        }
        let sorted = parameters.sorted { first, second in first.name == second.name ? first.value < second.value : first.name < second.name }
        return sorted.map { parameter in parameter.name + "=" + parameter.value }.joined(separator: "&")
    }

    /// `name:value` lines sorted by lower-cased name (a repeated name's
    /// values joined by commas, in order; spaces trimmed and runs of them
    /// made one), and the names joined by semicolons.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (String, String) {
        var values: [String: [String]] = [:]
        for (name, value) in headers {
            let collapsed = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: " ")
            values[name.lowercased(), default: []].append(collapsed)
        }
        let names = values.keys.sorted()
        let lines = names.map { "\($0):\(values[$0, default: []].joined(separator: ","))\n" }.joined()
        return (lines, names.joined(separator: ";"))
    }

    /// Each byte but letters, digits and `-._~` as `%XX`, upper-case.
    static func encode(_ bytes: [UInt8]) -> String {
        var encoded = ""
        encoded.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                encoded += String(decoding: [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return encoded
    }

    /// The bytes `text` stands for: `%XX` decoded, anything else as its UTF-8.
    static func percentDecoded(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let byte = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                decoded.append(byte)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

/// An AWS access key, its secret and, for temporary credentials, a session token.
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The access key only: the secret and the token never reach a log.
    public var description: String { "AWSCredentials(\(accessKeyID))" }
}
