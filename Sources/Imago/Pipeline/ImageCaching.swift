/// Keeps decoded images in memory: the capability the pipeline uses for its
/// memory tier. Calls are synchronous and must never block for long: the
/// pipeline makes them on the caller's thread to return memory hits at once.
public protocol ImageCaching: Sendable {
    /// The image stored for `key`, if any.
    func image(forKey key: ImageCacheKey) -> Image?
    /// Stores `image` for `key`, charging its ``Image/cost``.
    func store(_ image: Image, forKey key: ImageCacheKey)
    /// Removes the image for `key`, if any.
    func removeImage(forKey key: ImageCacheKey)
    /// Removes every image.
    func removeAll()
    /// Removes the images whose time to live has passed.
    func removeExpired()
    /// The number of images evicted by the cache's limits since it was created.
    var evictionCount: Int { get }
    /// Gives memory back on memory pressure. Default: ``removeAll()`` for
    /// either trim, for caches that cannot evict by cost.
    func trimMemory(_ trim: MemoryTrim)
}

extension ImageCaching {
    public func trimMemory(_ trim: MemoryTrim) { removeAll() }
}

extension MemoryCache: ImageCaching where Key == ImageCacheKey, Value == Image {
    public func image(forKey key: ImageCacheKey) -> Image? { value(forKey: key) }
    public func store(_ image: Image, forKey key: ImageCacheKey) { set(image, forKey: key, cost: image.cost) }
    public func removeImage(forKey key: ImageCacheKey) { _ = removeValue(forKey: key) }
}
