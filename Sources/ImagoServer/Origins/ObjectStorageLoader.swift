import Foundation
import HTTPTypes
import Imago

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
        guard let target = target(for: request.url), let host = target.host else { throw DataLoadingError(.invalidURL, url: request.url) }
        var headers = request.headers
        let payloadHash = SigV4Signer.emptyPayloadHash
        headers[HTTPField.Name("x-amz-content-sha256")!] = payloadHash
        if let credentials = settings.credentials {
            let signer = SigV4Signer(credentials: credentials, region: settings.region, service: "s3", normalizesPath: false)
            let hostField = target.port.map { "\(host):\($0)" } ?? host
            let signature = signer.sign(
                method: "GET", path: target.path(percentEncoded: true),
                headers: [("host", hostField), ("x-amz-content-sha256", payloadHash)], payloadHash: payloadHash, date: Date())
            for (name, value) in signature.headers { headers[HTTPField.Name(name)!] = value }
        }
        var response = try await http.loadData(for: DataRequest(url: target, headers: headers), progress: progress)
        response.url = request.url
        return response
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
