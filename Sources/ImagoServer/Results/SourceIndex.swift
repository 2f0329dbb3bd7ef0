import Foundation
import ImagoCaching
import ImagoConcurrency

/// Which answers were made from each source, so that a purge can find
/// them all: kept in memory and, beside the answers, on disk (an entry a
/// source, under a key no answer's can be, since those start with the
/// source URL), so that it survives a restart as the answers do. Updated
/// on the disk threads, when an answer is first written.
final class SourceIndex: Sendable {
    private let disk: DiskCache?
    /// The answers' disk keys by source, for the sources touched since start.
    private let entries = Locked<[String: Set<String>]>([:])
    /// Held across an entry's read, change and write, so that two writes
    /// of one source never lose each other's keys. Writes are rare: one
    /// for each new answer, not one a request.
    private let writing = Locked<Void>(())

    init(disk: DiskCache?) {
        self.disk = disk
    }

    /// Records that `answerKey` was made from `source`; blocking, on a disk thread.
    func add(_ answerKey: String, source: String) {
        writing.withLock { _ in
            var keys = load(source)
            guard keys.insert(answerKey).inserted else { return }
            entries.withLock { $0[source] = keys }
            try? disk?.storeData(Self.encode(keys), forKey: Self.key(source))
        }
    }

    /// Forgets `source` and returns the keys of the answers made from it; blocking.
    func remove(_ source: String) -> Set<String> {
        writing.withLock { _ in
            let keys = load(source)
            entries.withLock { $0[source] = [] }
            try? disk?.removeData(forKey: Self.key(source))
            return keys
        }
    }

    /// The keys known for `source`: from memory, else from disk.
    private func load(_ source: String) -> Set<String> {
        if let known = entries.withLock({ $0[source] }) { return known }
        let stored = disk?.cachedData(forKey: Self.key(source)).map { Self.decode($0.data) } ?? []
        entries.withLock { $0[source] = stored }
        return stored
    }

    private static func key(_ source: String) -> String { "\u{0}index\u{0}" + source }

    /// Each key as its length in UTF-8 bytes, a colon, then the key: any
    /// key reads back, whatever it holds.
    static func encode(_ keys: Set<String>) -> Data {
        Data(keys.sorted().map { "\($0.utf8.count):\($0)" }.joined().utf8)
    }

    static func decode(_ data: Data) -> Set<String> {
        var keys: Set<String> = []
        let bytes = [UInt8](data)
        var index = 0
        while let colon = bytes[index...].firstIndex(of: UInt8(ascii: ":")),
            let length = Int(String(decoding: bytes[index..<colon], as: UTF8.self)), length >= 0, colon + 1 + length <= bytes.count
        {
            keys.insert(String(decoding: bytes[(colon + 1)..<(colon + 1 + length)], as: UTF8.self))
            index = colon + 1 + length
        }
        return keys
    }
}
