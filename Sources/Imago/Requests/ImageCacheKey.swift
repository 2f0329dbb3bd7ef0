/// The key of a decoded image in the memory cache: the fields that change its
/// pixels, compared field by field.
///
/// A request's key is ``ImagePipeline/Cache/key(for:)``; ``init(_:)`` makes
/// the key of an image stored by hand under a plain string.
///
/// ```swift
/// pipeline.cache.storeImage(avatar, forKey: ImageCacheKey("user/42"))
/// let same = pipeline.cache.cachedImage(forKey: ImageCacheKey("user/42"))
/// ```
///
/// Two keys are equal exactly when every field is: no field can spell
/// another's value, whatever characters a URL or identifier holds.
public struct ImageCacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The key of the encoded data the image is decoded from (``ImageRequest/cacheKey``).
    public let dataKey: String
    /// The size the image was scaled to, if any.
    public let targetSize: ImageSize?
    /// How it was scaled to ``targetSize``; always ``ContentMode/fill`` without one.
    public let contentMode: ContentMode
    /// The identifiers of the processors applied, in order.
    public let processorIdentifiers: [String]
    /// Whether the image is decoded from a thumbnail the file embeds
    /// (``ImageRequest/prefersEmbeddedThumbnail``).
    public let isEmbeddedThumbnail: Bool
    /// Whether the colours were converted to sRGB
    /// (``ImageRequest/convertsToSRGB``).
    public let convertsToSRGB: Bool
    /// The page or frame decoded (``ImageRequest/page``).
    public let page: Int
    /// Hashed once: the key is hashed on every memory-cache lookup.
    private let hash: Int

    /// The key of an image stored under `key` with no decoding options.
    public init(_ key: String) {
        self.init(dataKey: key, targetSize: nil, contentMode: .fill, processorIdentifiers: [])
    }

    /// The key of the image decoded from `dataKey` with these options.
    public init(
        dataKey: String, targetSize: ImageSize?, contentMode: ContentMode, processorIdentifiers: [String], isEmbeddedThumbnail: Bool = false,
        convertsToSRGB: Bool = true, page: Int = 0
    ) {
        self.dataKey = dataKey
        self.targetSize = targetSize
        self.contentMode = targetSize == nil ? .fill : contentMode
        self.processorIdentifiers = processorIdentifiers
        self.isEmbeddedThumbnail = isEmbeddedThumbnail
        self.convertsToSRGB = convertsToSRGB
        self.page = page
        var hasher = Hasher()
        hasher.combine(dataKey)
        hasher.combine(targetSize)
        hasher.combine(self.contentMode)
        hasher.combine(processorIdentifiers)
        hasher.combine(isEmbeddedThumbnail)
        hasher.combine(convertsToSRGB)
        hasher.combine(page)
        hash = hasher.finalize()
    }

    /// The key of a request's image.
    init(request: ImageRequest) {
        self.init(
            dataKey: request.cacheKey, targetSize: request.targetSize, contentMode: request.contentMode,
            processorIdentifiers: request.processors.map(\.identifier), isEmbeddedThumbnail: request.prefersEmbeddedThumbnail,
            convertsToSRGB: request.convertsToSRGB, page: request.page
        )
    }

    /// Whether the image is the data decoded as it is (no scaling, no processors).
    var isOriginal: Bool { targetSize == nil && processorIdentifiers.isEmpty && !isEmbeddedThumbnail && convertsToSRGB && page == 0 }

    public static func == (lhs: ImageCacheKey, rhs: ImageCacheKey) -> Bool {
        lhs.hash == rhs.hash && lhs.dataKey == rhs.dataKey && lhs.targetSize == rhs.targetSize
            && lhs.contentMode == rhs.contentMode && lhs.processorIdentifiers == rhs.processorIdentifiers
            && lhs.isEmbeddedThumbnail == rhs.isEmbeddedThumbnail && lhs.convertsToSRGB == rhs.convertsToSRGB
            && lhs.page == rhs.page
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    /// The data key and the options, for logs.
    public var description: String {
        var parts = [dataKey]
        if let targetSize { parts.append("\(contentMode.rawValue) \(targetSize)") }
        parts += processorIdentifiers
        if isEmbeddedThumbnail { parts.append("embedded thumbnail") }
        if !convertsToSRGB { parts.append("colours as stored") }
        if page != 0 { parts.append("page \(page)") }
        return parts.joined(separator: " + ")
    }
}

/// The key an image fetch is shared under: requests that treat the caches
/// differently never wait on each other's work.
struct ImageFetchKey: Hashable, Sendable, CustomStringConvertible {
    let image: ImageCacheKey
    let networkPolicy: ImageRequest.NetworkPolicy

    var description: String { image.description }
}

/// The key a download is shared under: a reload never joins a conditional
/// request, whose 304 would hand it the cached data, and requests with
/// other fields (a Range, another Accept) never share an answer.
struct DataFetchKey: Hashable, Sendable, CustomStringConvertible {
    let dataKey: String
    let isReload: Bool
    /// The request's fields; `nil` for none, the usual case, which then
    /// costs the key no reference to count.
    let headers: HTTPFields?
    /// The fields for some URLs only; likewise `nil` for none.
    let scopedHeaders: [ScopedFields]?

    init(dataKey: String, isReload: Bool, headers: HTTPFields, scopedHeaders: [ScopedFields] = []) {
        self.dataKey = dataKey
        self.isReload = isReload
        self.headers = headers.isEmpty ? nil : headers
        self.scopedHeaders = scopedHeaders.isEmpty ? nil : scopedHeaders
    }

    var description: String { dataKey }
}

/// The strings the pipeline stores entries under in its ``DataCaching`` tier:
/// the original data, a processed image, a partial download. They share one
/// key space, so the encoding is injective: a key of one kind never equals a
/// key of another, nor a key made from other fields.
///
/// A data key is stored as it is (so a `DiskCache` filled by hand, or by an
/// earlier version, is read under the request's ``ImageRequest/cacheKey``),
/// unless it starts with NUL; every other key starts with NUL and a kind
/// letter, and its fields are length-prefixed.
enum DiskKey {
    private static let mark: Character = "\u{0}"

    /// The key of the original data stored under `dataKey`.
    static func data(_ dataKey: String) -> String {
        dataKey.first == mark ? "\(mark)d" + dataKey : dataKey
    }

    /// The key of a processed image.
    static func processedImage(_ key: ImageCacheKey) -> String {
        var encoded = "\(mark)p"
        field(key.dataKey, to: &encoded)
        field(key.targetSize.map { "\($0.width)x\($0.height)" } ?? "", to: &encoded)
        field(key.contentMode.rawValue, to: &encoded)
        encoded += "\(key.processorIdentifiers.count);"
        for identifier in key.processorIdentifiers { field(identifier, to: &encoded) }
        // Last and only when set, so that the keys stored before it existed stay valid.
        if key.isEmbeddedThumbnail { encoded += "t;" }
        if !key.convertsToSRGB { encoded += "s;" }
        if key.page != 0 { encoded += "p\(key.page);" }
        return encoded
    }

    /// The key of the bytes kept from an interrupted download of `dataKey`.
    static func partialDownload(_ dataKey: String) -> String {
        "\(mark)r" + dataKey
    }

    /// Appends `value` prefixed with its length in UTF-8 bytes.
    private static func field(_ value: String, to encoded: inout String) {
        encoded += "\(value.utf8.count):" + value
    }
}
