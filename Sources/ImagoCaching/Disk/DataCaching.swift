import Foundation

/// Stores data by key: the capability the pipeline uses for its disk tier.
///
/// Implementations are thread-safe and may block on I/O: call them from a
/// thread that may block, not from Swift's cooperative pool (the pipeline
/// runs them on its own I/O threads).
public protocol DataCaching: Sendable {
    /// The data and metadata stored for `key`, or nil if there is none or it
    /// could not be read whole.
    func cachedData(forKey key: String) -> CachedData?

    /// Stores `data` and its caller-owned `metadata` for `key`, replacing what
    /// was stored before.
    func storeData(_ data: Data, metadata: Data, forKey key: String) throws(DiskCacheError)

    /// Whether an entry exists for `key`, without reading it.
    func containsData(forKey key: String) -> Bool

    /// Removes the entry for `key`, if any.
    func removeData(forKey key: String) throws(DiskCacheError)

    /// Removes every entry.
    func removeAll() throws(DiskCacheError)

    /// Removes the entries older than the store's maximum age.
    func removeExpired() throws(DiskCacheError)

    /// A quick answer that never blocks: `false` only if there is certainly
    /// no entry for `key`, so that a miss costs no trip to an I/O thread.
    func mayContainData(forKey key: String) -> Bool

    /// Whether a store of `key` now would write, answered without I/O:
    /// `false` when the store's admission policy would only remember the
    /// key (and it now has), so that such a store costs no trip to an I/O
    /// thread.
    func admitsData(forKey key: String) -> Bool
}

extension DataCaching {
    /// Stores that cannot answer without I/O say "maybe".
    public func mayContainData(forKey key: String) -> Bool { true }

    /// Stores without an admission policy write every store.
    public func admitsData(forKey key: String) -> Bool { true }

    /// Stores without an age limit keep everything: the default removes nothing.
    public func removeExpired() throws(DiskCacheError) {}
}

/// An entry read from a ``DataCaching`` store: the data and the metadata that
/// was stored with it.
public struct CachedData: Sendable, Equatable {
    /// The stored bytes.
    public var data: Data
    /// The caller's metadata (for example, HTTP response headers).
    public var metadata: Data

    /// An entry with the given data and metadata.
    public init(data: Data, metadata: Data = Data()) {
        self.data = data
        self.metadata = metadata
    }
}
