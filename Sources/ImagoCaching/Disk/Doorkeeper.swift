/// The keys a ``DiskCache`` with ``DiskCache/Admission/secondStore(window:)``
/// has seen stored once: two generations of at most half the window each.
/// When the newer one fills, the older one is forgotten, so a key is
/// remembered for at least half the window's stores of new keys.
struct Doorkeeper: Sendable {
    private var newer: Set<UInt64> = []
    private var older: Set<UInt64> = []
    private let generationSize: Int

    init(window: Int) {
        generationSize = max(1, window / 2)
    }

    /// Whether `key` was seen before; if not, it is remembered.
    mutating func admits(_ key: UInt64) -> Bool {
        if newer.contains(key) || older.contains(key) { return true }
        if newer.count >= generationSize {
            older = newer
            newer = []
        }
        newer.insert(key)
        return false
    }
}
