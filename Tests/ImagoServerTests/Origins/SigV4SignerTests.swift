import Foundation
import Testing

@testable import ImagoServer

/// Imago's SigV4 signer against AWS's published test suite (the folder
/// `aws-sig-v4-test-suite` beside this file): for every case, the
/// canonical request, the string to sign, the signature and the
/// `Authorization` field are the expected ones, byte for byte.
@Suite("SigV4: AWS's test suite")
struct SigV4SignerTests {
    struct Case: CustomTestStringConvertible {
        var name: String
        var folder: URL
        var testDescription: String { name }

        func text(_ file: String) throws -> String {
            try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        }
    }

    /// `context.json`, its snake-case keys read as camel case.
    struct Context: Decodable {
        struct Credentials: Decodable {
            var accessKeyId: String
            var secretAccessKey: String
            var token: String?
        }
        var credentials: Credentials
        var normalize: Bool
        var region: String
        var service: String
        var signBody: Bool
        var omitSessionToken: Bool?
        var timestamp: String
    }

    static let cases: [Case] = {
        guard let suite = Bundle.module.url(forResource: "aws-sig-v4-test-suite", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: suite.path)
        else { return [] }
        return names.sorted().filter { !$0.hasSuffix(".md") }.map { Case(name: $0, folder: suite.appendingPathComponent($0)) }
    }()

    /// A request as the suite writes it: the request line, fields (a line
    /// starting with white space continues the one before), a blank line,
    /// the body.
    static func parse(_ text: String) -> (method: String, path: String, query: String, headers: [(name: String, value: String)], body: String) {
        let lines = text.components(separatedBy: "\n")
        let requestLine = lines[0]
        let method = String(requestLine.prefix { $0 != " " })
        var target = String(requestLine.dropFirst(method.count + 1))
        if let version = target.range(of: " HTTP/", options: .backwards) { target = String(target[..<version.lowerBound]) }
        let pathAndQuery = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var headers: [(name: String, value: String)] = []
        var index = 1
        while index < lines.count, !lines[index].isEmpty {
            let line = lines[index]
            if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += "\n" + line
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
            }
            index += 1
        }
        let body = index + 1 < lines.count ? lines[(index + 1)...].joined(separator: "\n") : ""
        return (method, String(pathAndQuery[0]), pathAndQuery.count > 1 ? String(pathAndQuery[1]) : "", headers, body)
    }

    @Test func theSuiteIsThere() {
        #expect(Self.cases.count >= 30)
    }

    @Test(arguments: cases)
    func signsAsTheSuiteExpects(_ testCase: Case) throws {
        // Given the case's request and context
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let context = try decoder.decode(Context.self, from: Data(try testCase.text("context.json").utf8))
        let request = Self.parse(try testCase.text("request.txt"))
        let credentials = SigV4Signer.Credentials(
            accessKeyID: context.credentials.accessKeyId, secretAccessKey: context.credentials.secretAccessKey,
            sessionToken: context.credentials.token)
        var signer = SigV4Signer(credentials: credentials, region: context.region, service: context.service)
        signer.normalizesPath = context.normalize
        signer.signsSessionToken = !(context.omitSessionToken ?? false)
        let date = try #require(ISO8601DateFormatter().date(from: context.timestamp))
        let payloadHash = SigV4Signer.payloadHash(Data(request.body.utf8))
        var headers = request.headers
        if context.signBody { headers.append(("x-amz-content-sha256", payloadHash)) }

        // When it is signed
        let signed = signer.sign(
            method: request.method, path: request.path, query: request.query, headers: headers, payloadHash: payloadHash, date: date)

        // Then every stage is the suite's
        #expect(signed.canonicalRequest == (try testCase.text("header-canonical-request.txt")))
        #expect(signed.stringToSign == (try testCase.text("header-string-to-sign.txt")))
        #expect(signed.signature == (try testCase.text("header-signature.txt")).trimmingCharacters(in: .whitespacesAndNewlines))
        let expectedAuthorization = try testCase.text("header-signed-request.txt").components(separatedBy: "\n")
            .first { $0.hasPrefix("Authorization:") }.map { String($0.dropFirst("Authorization:".count)) }
        #expect(signed.authorization == expectedAuthorization)
    }
}
