import Foundation

/// A disk entry read back, with its HTTP metadata if it has any.
struct StoredEntry: Sendable {
    var data: Data
    /// `nil` for entries stored without HTTP metadata (through the cache API
    /// or from a data provider).
    var metadata: HTTPCacheMetadata?
    var freshness: HTTPFreshness?
}

/// The pipeline's HTTP caching rules, as a value the decode threads can carry:
/// what a stored entry may be used for, which validators to send, and what
/// to store after an exchange.
struct CacheRules: Sendable {
    var policy: ImagePipeline.DiskCachePolicy
    var maximumHeuristicLifetime: Double
    var servesStaleWhenOffline: Bool
    var now: @Sendable () -> Date

    /// What a stored entry may be used for.
    enum Use {
        /// Not for this request: other Vary values, or damaged metadata.
        case skip
        /// Serve it as it is.
        case serve(ImageResponse.Freshness)
        /// Ask the server first.
        case revalidate(StoredEntry)
    }

    func use(_ cached: CachedData, for request: ImageRequest) -> Use {
        guard !cached.metadata.isEmpty else {
            // Stored by the app or a data provider: nothing to validate against.
            return request.networkPolicy == .revalidate ? .revalidate(StoredEntry(data: cached.data)) : .serve(.fresh)
        }
        guard let metadata = HTTPCacheMetadata(decoding: cached.metadata),
            policy == .ignoreHTTPHeaders || metadata.matchesVary(request.headers)
        else { return .skip }
        let freshness = metadata.freshness(at: now(), maximumHeuristicLifetime: maximumHeuristicLifetime)
        let verdict = policy == .ignoreHTTPHeaders ? .fresh : freshness.verdict
        switch request.networkPolicy {
        case .reload:
            return .skip
        case .cacheOnly:
            return .serve(verdict == .fresh ? .fresh : .stale(.cacheOnly))
        case .revalidate:
            return .revalidate(StoredEntry(data: cached.data, metadata: metadata, freshness: freshness))
        case .useCache:
            switch verdict {
            case .fresh: return .serve(.fresh)
            case .staleWhileRevalidate: return .serve(.stale(.revalidatingInBackground))
            case .stale: return .revalidate(StoredEntry(data: cached.data, metadata: metadata, freshness: freshness))
            }
        }
    }

    /// The conditional-request fields for an entry (RFC 9110 §13.1).
    func validators(for entry: StoredEntry) -> HTTPFields {
        var headers = HTTPFields()
        if let etag = entry.metadata?.etag { headers.append(HTTPField(name: .ifNoneMatch, value: etag)) }
        if let lastModified = entry.metadata?.lastModified { headers.append(HTTPField(name: .ifModifiedSince, value: lastModified)) }
        return headers
    }

    /// The metadata to store with a downloaded body; `nil` if the response
    /// must not be stored.
    func metadata(for response: DataLoadingResponse, requestHeaders: HTTPFields, requestTime: Date) -> Data? {
        let metadata = HTTPCacheMetadata(
            responseHeaders: response.headers, requestHeaders: requestHeaders, requestTime: requestTime, responseTime: now()
        )
        guard policy == .ignoreHTTPHeaders || metadata.isStorable(statusCode: response.statusCode, requestHeaders: requestHeaders)
        else { return nil }
        return metadata.encoded()
    }

    /// The entry's metadata after the server confirmed it with a 304.
    func refreshed(_ entry: StoredEntry, with response: DataLoadingResponse, requestHeaders: HTTPFields, requestTime: Date) -> Data {
        let responseTime = now()
        guard let metadata = entry.metadata else {
            return HTTPCacheMetadata(
                responseHeaders: response.headers, requestHeaders: requestHeaders, requestTime: requestTime, responseTime: responseTime
            ).encoded()
        }
        return metadata.updated(with: response.headers, requestTime: requestTime, responseTime: responseTime).encoded()
    }

    /// Whether a stale entry may stand in for a response the server failed to give.
    func allowsStaleOnError(_ entry: StoredEntry) -> Bool {
        guard policy == .http, let freshness = entry.freshness else { return servesStaleWhenOffline }
        return freshness.allowsStaleOnError(offline: servesStaleWhenOffline)
    }
}

extension ImagePipeline {
    var cacheRules: CacheRules {
        CacheRules(
            policy: configuration.diskCachePolicy,
            maximumHeuristicLifetime: configuration.maximumHeuristicLifetime.seconds,
            servesStaleWhenOffline: configuration.servesStaleWhenOffline,
            now: configuration.currentDate
        )
    }

    /// What a background refresh is for.
    enum RefreshKey: Hashable, Sendable {
        case image(ImageFetchKey)
        case data(DataFetchKey)
    }

    /// Refreshes an entry served under `stale-while-revalidate`, with a
    /// request of its own that no waiter can cancel: the image, or only the
    /// data for a ``data(for:)`` request. One refresh per image (or data) at a time.
    func refreshInBackground(_ request: ImageRequest, asData: Bool = false) {
        var refresh = request
        refresh.networkPolicy = .revalidate
        refresh.priority = .low
        let key: RefreshKey = asData ? .data(refresh.dataFetchKey) : .image(refresh.imageFetchKey)
        backgroundRefreshes.withLock { refreshes in
            guard refreshes[key] == nil else { return }
            // Created under the lock, so its removal cannot come before its insertion.
            refreshes[key] = Task { [self, refresh] in
                if asData { _ = try? await data(for: refresh) } else { _ = try? await image(for: refresh) }
                backgroundRefreshes.withLock { $0[key] = nil }
            }
        }
    }

    /// Waits for the background refreshes running now (started for entries
    /// served under `stale-while-revalidate`) to finish, for at most
    /// `timeout`; those still running then are cancelled. Call it before a
    /// short-lived process exits, or the refreshes it started never happen.
    /// Returns `true` if every refresh finished in time.
    public func waitForBackgroundRefreshes(timeout: Duration) async -> Bool {
        let tasks = backgroundRefreshes.withLock { Array($0.values) }
        guard !tasks.isEmpty else { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for task in tasks { await task.value }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let finished = await group.next() ?? false
            // The group waits for both children: end whichever still runs.
            if !finished { for task in tasks { task.cancel() } }
            group.cancelAll()
            return finished
        }
    }
}
