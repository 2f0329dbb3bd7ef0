import Foundation
import HTTPTypes
import Imago

/// The service's loader: each source to the origin its scheme names.
/// `http(s)://` goes to the guarded HTTP loader, with the fields the
/// operator attaches to a prefix (an `Authorization` token, a cookie, a
/// `User-Agent`), sent to the redirect hops under it only; `local:///` to
/// the ``LocalFileLoader``; `s3://` to the ``ObjectStorageLoader``. The
/// pipeline above caches and revalidates them all alike, by the HTTP
/// fields each answers with.
struct OriginLoader: DataLoading {
    let http: any DataLoading
    let local: LocalFileLoader?
    let objectStorage: ObjectStorageLoader?
    /// The operator's fields by prefix, made once rather than per download.
    let sourceHeaders: [ScopedFields]

    func loadData(for request: DataRequest, progress: @escaping @Sendable (DownloadProgress) -> Void) async throws(DataLoadingError)
        -> DataLoadingResponse
    {
        switch request.url.scheme?.lowercased() {
        case "local":
            guard let local else { throw DataLoadingError(.refused("the server has no local root"), url: request.url) }
            return try await local.load(request)
        case "s3":
            guard let objectStorage else { throw DataLoadingError(.refused("the server has no object storage"), url: request.url) }
            return try await objectStorage.load(request, progress: progress)
        default:
            var request = request
            request.scopedHeaders += sourceHeaders
            return try await http.loadData(for: request, progress: progress)
        }
    }
}
