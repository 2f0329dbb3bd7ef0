import ImagoConcurrency

/// Options already read, by the URL text that spelled them: the many URLs
/// that ask for the same options (one per source image) read them and
/// work out their cache key once. Bounded: when it holds `capacity`
/// spellings it starts again empty, so URLs made to miss it cost no more
/// than reading their options. Errors are not kept.
final class OptionsMemo: Sendable {
    /// Options and their ``ProcessingOptions/cacheKey``.
    struct Entry: Sendable {
        let options: ProcessingOptions
        let cacheKey: String
    }

    private let entries = Locked<[String: Entry]>([:])
    let capacity: Int

    init(capacity: Int = 4_096) {
        self.capacity = capacity
    }

    /// The entry for `text`, read with `read` the first time.
    func entry(for text: String, read: () throws(OptionError) -> ProcessingOptions) throws(OptionError) -> Entry {
        if let entry = entries.withLock({ $0[text] }) { return entry }
        let options = try read()
        let entry = Entry(options: options, cacheKey: options.cacheKey)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = entry
        }
        return entry
    }
}
