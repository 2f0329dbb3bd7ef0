import AsyncHTTPClient
import Foundation
import HTTPTypes
import Imago
import NIOCore

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
        guard let target = target(for: url) else { throw DataLoadingError(.invalidURL, url: url) }
        var request = HTTPClientRequest(url: target.absoluteString)
        request.method = .PUT
        for (name, value) in signedFields(method: "PUT", target: target, payloadHash: SigV4Signer.payloadHash(data)) {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        request.headers.replaceOrAdd(name: "content-length", value: String(data.count))
        request.body = .bytes(ByteBuffer(bytes: data))
        let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw DataLoadingError(.httpStatus(Int(response.status.code)), url: url)
        }
    }

    /// `x-amz-content-sha256`, and with credentials the signature's fields,
    /// for a request of `method` to `target`.
    private func signedFields(method: String, target: URL, payloadHash: String) -> [(name: String, value: String)] {
        var fields = [(name: "x-amz-content-sha256", value: payloadHash)]
        guard let credentials = settings.credentials, let host = target.host else { return fields }
        let signer = SigV4Signer(credentials: credentials, region: settings.region, service: "s3", normalizesPath: false)
        let hostField = target.port.map { "\(host):\($0)" } ?? host
        let signature = signer.sign(
            method: method, path: target.path(percentEncoded: true), headers: [("host", hostField)] + fields, payloadHash: payloadHash,
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
