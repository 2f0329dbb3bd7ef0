import Foundation

/// A disk entry read back, with its HTTP metadata if it has any.
struct StoredEntry: Sendable {
    var data: Data
    /// `nil` for entries stored without HTTP metadata (through the cache API
    /// or from a data provider).
    var metadata: HTTPCacheMetadata?
    var freshness: HTTPFreshness?
    /// `false` for a response stored for other values of the fields it
    /// varies on: only a 304 can say it answers this request too, and it
    /// never stands in for an error.
    var matchesRequest = true

    /// The stored status (200 for bytes stored without HTTP metadata).
    var statusCode: Int { metadata?.statusCode ?? 200 }

    /// The fields it is served with: the stored ones and its current Age.
    var servedFields: HTTPFields {
        guard let metadata else { return [:] }
        return metadata.servedFields(age: freshness?.age ?? 0)
    }
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
        /// Not for this request: damaged metadata, or other Vary values and no validator.
        case skip
        /// Serve it as it is.
        case serve(ImageResponse.Freshness, StoredEntry)
        /// Ask the server first.
        case revalidate(StoredEntry)
    }

    /// What `cached` may be used for, under the response's directives and
    /// the request's own (RFC 9111 §4, §5.2.1).
    func use(_ cached: CachedData, for request: ImageRequest) -> Use {
        let directives = request.cacheDirectives
        let networkPolicy = request.networkPolicy(under: directives)
        guard !cached.metadata.isEmpty else {
            // Stored by the app or a data provider: nothing to validate against.
            let entry = StoredEntry(data: cached.data)
            return networkPolicy == .revalidate ? .revalidate(entry) : .serve(.fresh, entry)
        }
        guard let metadata = HTTPCacheMetadata(decoding: cached.metadata) else { return .skip }
        let freshness = metadata.freshness(at: now(), maximumHeuristicLifetime: maximumHeuristicLifetime)
        var entry = StoredEntry(data: cached.data, metadata: metadata, freshness: freshness)
        if policy == .ignoreHTTPHeaders { return networkPolicy == .revalidate ? .revalidate(entry) : .serve(.fresh, entry) }
        guard metadata.matchesVary(request.headers) else {
            // Stored for another request: with a validator, the server can say whether it fits this one (§4.1, §4.3.1).
            guard networkPolicy != .cacheOnly, metadata.etag != nil || metadata.lastModified != nil else { return .skip }
            entry.matchesRequest = false
            return .revalidate(entry)
        }
        let verdict = freshness.verdict(for: directives)
        switch networkPolicy {
        case .reload:
            return .skip
        case .cacheOnly:
            return .serve(verdict == .fresh ? .fresh : .stale(.cacheOnly), entry)
        case .revalidate:
            return .revalidate(entry)
        case .useCache:
            switch verdict {
            case .fresh: return .serve(.fresh, entry)
            case .staleAccepted: return .serve(.stale(.acceptedByRequest), entry)
            case .staleWhileRevalidate: return .serve(.stale(.revalidatingInBackground), entry)
            case .stale: return .revalidate(entry)
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
            statusCode: response.statusCode, responseHeaders: response.headers, requestHeaders: requestHeaders, requestTime: requestTime,
            responseTime: now()
        )
        let storable =
            policy == .ignoreHTTPHeaders
            ? (200...299).contains(response.statusCode) && response.statusCode != 206 : metadata.isStorable(requestHeaders: requestHeaders)
        return storable ? metadata.encoded() : nil
    }

    /// The entry after the server confirmed it with a 304 for `requestHeaders`.
    func refreshed(_ entry: StoredEntry, with response: DataLoadingResponse, requestHeaders: HTTPFields, requestTime: Date) -> HTTPCacheMetadata {
        let responseTime = now()
        guard let metadata = entry.metadata else {
            return HTTPCacheMetadata(
                responseHeaders: response.headers, requestHeaders: requestHeaders, requestTime: requestTime, responseTime: responseTime)
        }
        return metadata.updated(with: response.headers, requestHeaders: requestHeaders, requestTime: requestTime, responseTime: responseTime)
    }

    /// Whether a stale entry may stand in for a response the server failed to give.
    func allowsStaleOnError(_ entry: StoredEntry) -> Bool {
        guard entry.matchesRequest else { return false }
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
