import AsyncHTTPClient
import Foundation
import HTTPTypes
import Imago
import NIOCore
import NIOHTTP1

/// Fetches `s3://bucket/key` sources from S3 or an S3-compatible store,
/// signed with AWS Signature Version 4 (``SigV4Signer``), through its own
/// HTTP loader: the operator's endpoint is trusted, so the source guard
/// does not apply to it, and a redirect (a bucket in another region) is an
/// answer, not followed. The request's conditional fields go with it, so
/// the source cache revalidates by ETag (a 304). Without credentials the
/// requests go unsigned, for public buckets.
struct ObjectStorageLoader: Sendable {
    let settings: ObjectStorage
    let http: any DataLoading

    func load(_ request: DataRequest, progress: @escaping @Sendable (DownloadProgress) -> Void) async throws(DataLoadingError)
        -> DataLoadingResponse
    {
        guard let target = target(for: request.url) else { throw DataLoadingError(.invalidURL, url: request.url) }
        var headers = request.headers
        for (name, value) in signedFields(method: "GET", target: target, payloadHash: SigV4Signer.emptyPayloadHash) {
            headers[HTTPField.Name(name)!] = value
        }
        var response = try await http.loadData(for: DataRequest(url: target, headers: headers), progress: progress)
        response.url = request.url
        return response
    }

    /// Writes `data` as the object `url` names; throws what failed (a
    /// network error, or the store's status).
    func put(_ data: Data, to url: URL, timeout: Duration) async throws {
        _ = try await send(.PUT, to: url, body: data, timeout: timeout, accepting: 200..<300)
    }

    /// Removes the object `url` names (a missing one is no error).
    func delete(_ url: URL, timeout: Duration) async throws {
        _ = try await send(.DELETE, to: url, timeout: timeout, accepting: 200..<300)
    }

    /// The keys of the objects in `bucket` whose keys start with `prefix`, every page of them.
    func list(bucket: String, prefix: String, timeout: Duration) async throws -> [String] {
        guard let url = URL(string: "s3://\(bucket)/") else { throw DataLoadingError(.invalidURL, url: URL(fileURLWithPath: "/")) }
        var keys: [String] = []
        var token: String?
        repeat {
            var query = "list-type=2&prefix=" + SigV4Signer.encode(Array(prefix.utf8))
            if let token { query += "&continuation-token=" + SigV4Signer.encode(Array(token.utf8)) }
            let body = try await send(.GET, to: url, query: query, timeout: timeout, accepting: 200..<300)
            let text = String(decoding: body, as: UTF8.self)
            keys += Self.elements("Key", in: text).map(Self.unescaped)
            token = Self.elements("IsTruncated", in: text).first == "true" ? Self.elements("NextContinuationToken", in: text).first : nil
        } while token != nil
        return keys
    }

    /// A signed request of `method` to the object (or bucket) `url` names,
    /// with `query` as SigV4 encodes it; the body of an answer whose status
    /// is in `accepted`, else the status as the error.
    private func send(
        _ method: HTTPMethod, to url: URL, query: String = "", body: Data = Data(), timeout: Duration, accepting accepted: Range<Int>
    ) async throws -> Data {
        guard let target = target(for: url) else { throw DataLoadingError(.invalidURL, url: url) }
        var request = HTTPClientRequest(url: target.absoluteString + (query.isEmpty ? "" : "?" + query))
        request.method = method
        for (name, value) in signedFields(method: method.rawValue, target: target, query: query, payloadHash: SigV4Signer.payloadHash(body)) {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        if method == .PUT {
            request.headers.replaceOrAdd(name: "content-length", value: String(body.count))
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
        let received = try await response.body.collect(upTo: 16 << 20)
        guard accepted.contains(Int(response.status.code)) else { throw DataLoadingError(.httpStatus(Int(response.status.code)), url: url) }
        return Data(received.readableBytesView)
    }

    /// The text of every `<name>…</name>` element in `xml`, in order.
    static func elements(_ name: String, in xml: String) -> [String] {
        xml.components(separatedBy: "<\(name)>").dropFirst().compactMap { part in
            part.range(of: "</\(name)>").map { String(part[..<$0.lowerBound]) }
        }
    }

    /// XML's five escapes undone.
    static func unescaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// `x-amz-content-sha256`, and with credentials the signature's fields,
    /// for a request of `method` to `target`.
    private func signedFields(method: String, target: URL, query: String = "", payloadHash: String) -> [(name: String, value: String)] {
        var fields = [(name: "x-amz-content-sha256", value: payloadHash)]
        guard let credentials = settings.credentials, let host = target.host else { return fields }
        let signer = SigV4Signer(credentials: credentials, region: settings.region, service: "s3", normalizesPath: false)
        let hostField = target.port.map { "\(host):\($0)" } ?? host
        let signature = signer.sign(
            method: method, path: target.path(percentEncoded: true), query: query, headers: [("host", hostField)] + fields, payloadHash: payloadHash,
            date: Date())
        fields += signature.headers
        return fields
    }

    /// The object's HTTP URL: the key's path encoded as SigV4 signs it.
    func target(for url: URL) -> URL? {
        guard let bucket = url.host, !bucket.isEmpty else { return nil }
        let key = SigV4Signer.canonicalPath(url.path(percentEncoded: true), normalized: false)
        guard let endpoint = settings.endpoint ?? URL(string: "https://s3.\(settings.region).amazonaws.com"),
            var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false), let host = components.host
        else { return nil }
        let base = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        if settings.usesPathStyle {
            components.percentEncodedPath = base + "/" + SigV4Signer.encode(Array(bucket.utf8)) + key
        } else {
            components.host = bucket + "." + host
            components.percentEncodedPath = base + key
        }
        return components.url
    }
}
