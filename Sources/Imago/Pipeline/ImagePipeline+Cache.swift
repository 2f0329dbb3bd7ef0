import Foundation

extension ImagePipeline {
    /// Direct access to the pipeline's caches, by request or by key: memory
    /// synchronously, disk asynchronously (on the pipeline's disk threads).
    ///
    /// ```swift
    /// let cache = pipeline.cache
    /// cache.storeImage(avatar, forKey: ImageCacheKey("user/42"))  // memory
    /// try await cache.storeData(jpeg, forKey: "user/42")           // disk
    /// let image = cache.cachedImage(forKey: ImageCacheKey("user/42"))
    /// await cache.removeAll()
    /// ```
    ///
    /// Data is kept under a request's ``ImageRequest/cacheKey``; images under
    /// an ``ImageCacheKey``, the same key plus the decoding options
    /// (``key(for:)`` gives a request's, `ImageCacheKey("user/42")` one
    /// without options).
    public struct Cache: Sendable {
        let pipeline: ImagePipeline

        private var imageCache: (any ImageCaching)? { pipeline.configuration.imageCache }
        private var dataCache: (any DataCaching)? { pipeline.configuration.dataCache }

        /// The memory key of the image a request produces.
        public func key(for request: ImageRequest) -> ImageCacheKey { request.imageKey }

        /// The image in memory for `request`, if any (ignores its cache policy).
        public subscript(request: ImageRequest) -> Image? {
            get { imageCache?.image(forKey: request.imageKey) }
            nonmutating set {
                if let newValue { imageCache?.store(newValue, forKey: request.imageKey) } else { imageCache?.removeImage(forKey: request.imageKey) }
            }
        }

        /// The image in memory for `key`, if any.
        public func cachedImage(forKey key: ImageCacheKey) -> Image? { imageCache?.image(forKey: key) }

        /// Stores `image` in memory for `key`.
        public func storeImage(_ image: Image, forKey key: ImageCacheKey) { imageCache?.store(image, forKey: key) }

        /// Removes the image for `key` from memory.
        public func removeImage(forKey key: ImageCacheKey) { imageCache?.removeImage(forKey: key) }

        /// The data stored on disk for `key`, if any.
        public func cachedData(forKey key: String) async -> Data? {
            guard let dataCache else { return nil }
            return await pipeline.diskThreads.run { dataCache.cachedData(forKey: DiskKey.data(key))?.data }
        }

        /// Stores `data` on disk for `key`; a later request with that cache key
        /// decodes it instead of downloading.
        public func storeData(_ data: Data, forKey key: String) async throws(DiskCacheError) {
            guard let dataCache else { return }
            let result = await pipeline.diskThreads.run {
                Result { () throws(DiskCacheError) in try dataCache.storeData(data, metadata: Data(), forKey: DiskKey.data(key)) }
            }
            try result.get()
        }

        /// Removes the data for `key` from disk.
        public func removeData(forKey key: String) async {
            guard let dataCache else { return }
            await pipeline.diskThreads.run { [logger = pipeline.logger] in StoreStage.remove(DiskKey.data(key), from: dataCache, logger: logger) }
        }

        /// Tells the caches that a request with an unsafe method (POST, PUT,
        /// DELETE, PATCH, ...) to `url` went through (RFC 9111 §4.4): on a
        /// 2xx or 3xx answer, the data stored for `url`, and for the
        /// same-origin URLs its Location and Content-Location name, is
        /// removed from disk, and their images without decoding options from
        /// memory. A safe method or a failed answer changes nothing. Entries
        /// are found by the URL's default cache key (``ImageRequest/cacheKey``).
        /// Returns the URLs invalidated.
        ///
        /// ```swift
        /// let answer = try await upstream.execute(put)  // a pass-through server's PUT
        /// await pipeline.cache.invalidate(after: .put, to: url, response: answer)
        /// ```
        @discardableResult
        public func invalidate(after method: HTTPRequest.Method, to url: URL, response: HTTPResponse) async -> [URL] {
            let safe: Set<HTTPRequest.Method> = [.get, .head, .options, .trace]
            guard !safe.contains(method), (200...399).contains(response.status.code) else { return [] }
            var urls = [url]
            for name in [HTTPField.Name.location, .contentLocation] {
                guard let value = response.headerFields[name], let target = URL(string: value, relativeTo: url)?.absoluteURL,
                    target.scheme == url.scheme, target.host == url.host, target.port == url.port, !urls.contains(target)
                else { continue }
                urls.append(target)
            }
            for target in urls {
                removeImage(forKey: ImageCacheKey(target.absoluteString))
                await removeData(forKey: target.absoluteString)
            }
            return urls
        }

        /// Removes what `request` left in memory and on disk.
        public func remove(_ request: ImageRequest) async {
            removeImage(forKey: request.imageKey)
            await removeData(forKey: request.cacheKey)
        }

        /// Empties the memory cache.
        public func removeAllImages() { imageCache?.removeAll() }

        /// Gives memory back, as the pipeline does on its own when Linux
        /// reports memory pressure: for apps with a signal of their own.
        /// Trims the memory cache and hands freed pages back to the system.
        public func trimMemory(_ trim: MemoryTrim) {
            guard let imageCache else { return }
            ImagePipeline.trimMemory(imageCache, trim)
        }

        /// Empties the disk cache.
        public func removeAllData() async throws(DiskCacheError) {
            guard let dataCache else { return }
            try await pipeline.diskThreads.run { Result { () throws(DiskCacheError) in try dataCache.removeAll() } }.get()
        }

        /// Empties both caches.
        public func removeAll() async throws(DiskCacheError) {
            removeAllImages()
            try await removeAllData()
        }

        /// Removes expired entries from both caches.
        public func removeExpired() async throws(DiskCacheError) {
            imageCache?.removeExpired()
            guard let dataCache else { return }
            try await pipeline.diskThreads.run { Result { () throws(DiskCacheError) in try dataCache.removeExpired() } }.get()
        }
    }

    /// Direct access to the caches.
    public var cache: Cache { Cache(pipeline: self) }
}
