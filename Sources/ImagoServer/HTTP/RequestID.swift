import Synchronization

/// Ids for requests that bring no `X-Request-ID` of their own: a random
/// prefix drawn once per process, then a counter. Unique across instances
/// and restarts as far as 64 random bits go, with no system call per
/// request (`UUID()` opens, reads and closes /dev/urandom for each one).
enum RequestID {
    private static let prefix = UInt64.random(in: .min ... .max).hexadecimal(digits: 16)
    private static let counter = Atomic<UInt64>(0)

    /// The next id: 16 hexadecimal digits, a dash, at least 8 more.
    static func next() -> String {
        prefix + "-" + counter.wrappingAdd(1, ordering: .relaxed).newValue.hexadecimal(digits: 8)
    }
}

extension UInt64 {
    /// Lower-case hexadecimal, zero-padded to at least `digits` digits.
    func hexadecimal(digits: Int) -> String {
        let text = String(self, radix: 16)
        return String(repeating: "0", count: Swift.max(0, digits - text.count)) + text
    }
}
