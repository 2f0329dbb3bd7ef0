import Foundation

/// The first bytes of an interrupted download and the validator that ties
/// them to one version of the resource, kept (on disk, beside the entries)
/// so that a retry, or a request after a restart, asks only for the rest.
struct PartialDownload: Sendable, Equatable {
    var data: Data
    /// A strong ETag or a Last-Modified date, sent back as If-Range.
    var validator: String

    /// Downloads shorter than this start over: a Range request saves little.
    static let minimumCount = 16 << 10

    /// The bytes kept from a failure: a 200's first part, or a 206's part
    /// added to `previous`; `nil` if nothing can be continued.
    init?(from error: DataLoadingError, continuing previous: PartialDownload?) {
        guard let response = error.partial else { return nil }
        switch response.statusCode {
        case 200:
            guard let validator = Self.validator(response.headers) else { return nil }
            self.init(data: response.data, validator: validator)
        case 206:
            guard let previous, let range = ContentRange(response.headers.first(.contentRange)),
                range.start == previous.data.count
            else { return nil }
            self.init(data: previous.data + response.data, validator: previous.validator)
        default:
            return nil
        }
        guard data.count >= Self.minimumCount else { return nil }
    }

    init(data: Data, validator: String) {
        self.data = data
        self.validator = validator
    }

    /// A strong ETag, else Last-Modified (RFC 9110 §13.1.5 forbids weak ETags in If-Range).
    private static func validator(_ headers: HTTPFields) -> String? {
        if let etag = headers.first(.eTag), !etag.hasPrefix("W/") { return etag }
        return headers.first(.lastModified)
    }

    /// The fields that ask for the rest, if it is still the same version.
    var rangeHeaders: HTTPFields {
        [.range: "bytes=\(data.count)-", .ifRange: validator]
    }

    /// The whole body: these bytes and a 206 that continues them exactly to
    /// the end of the representation; `nil` if it does not.
    func completed(by response: DataLoadingResponse) -> DataLoadingResponse? {
        guard let range = ContentRange(response.headers.first(.contentRange)), range.start == data.count,
            range.end + 1 == range.start + response.data.count, range.total.map({ $0 == range.end + 1 }) ?? true
        else { return nil }
        var whole = response
        whole.statusCode = 200
        whole.data = data + response.data
        return whole
    }

    // MARK: Stored form

    /// Stored as a disk entry whose metadata is the validator.
    init?(_ cached: CachedData) {
        guard let validator = String(validating: cached.metadata, as: UTF8.self), !validator.isEmpty,
            cached.data.count >= Self.minimumCount
        else { return nil }
        self.init(data: cached.data, validator: validator)
    }
}

/// `Content-Range: bytes first-last/complete` (RFC 9110 §14.4).
struct ContentRange: Equatable {
    var start: Int
    var end: Int
    var total: Int?

    init?(_ value: String?) {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int(bounds[0]), let end = Int(bounds[1]), start >= 0, end >= start else { return nil }
        self.start = start
        self.end = end
        if parts[1] == "*" {
            total = nil
        } else {
            guard let total = Int(parts[1]), total > end else { return nil }
            self.total = total
        }
    }
}

extension ImagePipeline {
    /// The partial download stored for `key`, if any (read on the disk threads).
    func storedPartial(forKey key: String) async -> PartialDownload? {
        let partialKey = DiskKey.partialDownload(key)
        guard let dataCache = configuration.dataCache, dataCache.mayContainData(forKey: partialKey) else { return nil }
        return await diskThreads.run { dataCache.cachedData(forKey: partialKey).flatMap(PartialDownload.init) }
    }

    /// Keeps `partial` on disk for a later attempt (or removes what is kept, for `nil`).
    func storePartial(_ partial: PartialDownload?, forKey key: String) async {
        guard let dataCache = configuration.dataCache else { return }
        let partialKey = DiskKey.partialDownload(key)
        guard partial != nil || dataCache.mayContainData(forKey: partialKey) else { return }
        await diskThreads.run { [logger] in
            do {
                if let partial {
                    try dataCache.storeData(partial.data, metadata: Data(partial.validator.utf8), forKey: partialKey)
                } else {
                    try dataCache.removeData(forKey: partialKey)
                }
            } catch {
                logger.warning("keeping a partial download failed", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }
}
