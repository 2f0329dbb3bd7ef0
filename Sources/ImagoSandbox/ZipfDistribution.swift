#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Draws ranks 0..<count with probability proportional to 1 / (rank + 1)^exponent,
/// the skew of real cache workloads (a few hot keys, a long tail).
public struct ZipfDistribution: Sendable {
    private let cumulative: [Double]

    /// A distribution over `count` ranks with the given exponent (1.0 is classic Zipf).
    public init(count: Int, exponent: Double = 1.0) {
        var running = 0.0
        var cumulative: [Double] = []
        cumulative.reserveCapacity(count)
        for rank in 1...max(1, count) {
            running += 1 / pow(Double(rank), exponent)
            cumulative.append(running)
        }
        self.cumulative = cumulative.map { $0 / running }
    }

    /// One rank drawn with `generator`.
    public func next(using generator: inout some RandomNumberGenerator) -> Int {
        let u = Double.random(in: 0..<1, using: &generator)
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < u { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// A trace of `length` ranks drawn with a generator seeded by `seed`.
    public func trace(length: Int, seed: UInt64) -> [Int] {
        var generator = SeededGenerator(seed: seed)
        return (0..<length).map { _ in next(using: &generator) }
    }
}
