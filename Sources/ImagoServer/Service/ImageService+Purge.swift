import Foundation
import Imago

extension ImageService {
    /// Removes every cached answer made from `source` (spelled as in image
    /// URLs: `https://…`, `local:///…`, `s3://…`, or relative to the source
    /// base), in memory and on disk, in the shared result store, and the
    /// source's own bytes from the source cache, so that the next request
    /// fetches it again. Returns how many entries went. Other instances'
    /// own caches are theirs to purge. A source the policy refuses is its
    /// error.
    public func purge(source: String) async throws(ServiceError) -> Int {
        let url: URL
        do { url = try configuration.sourcePolicy.check(url: source) } catch { throw ServiceError(error) }
        var removed = await results.purge(source: url.absoluteString)
        removed += await store?.purge(source: url.absoluteString) ?? 0
        if let sources = pipeline.configuration.dataCache {
            let key = url.absoluteString
            if await pipeline.diskThreads.run({ sources.containsData(forKey: key) }) { removed += 1 }
            await pipeline.cache.removeData(forKey: key)
        }
        return removed
    }
}
