import Foundation

/// Counts and latencies of one pass of the demo, printed as a table row.
struct PassReport {
    var name: String
    var entries = 0
    var bytes = 0
    var hits = 0
    var misses = 0
    private var latencies: [Duration] = []

    init(name: String) {
        self.name = name
    }

    /// Runs `body`, recording how long it took.
    mutating func time<T>(_ body: () throws -> T) rethrows -> T {
        let start = ContinuousClock.now
        defer { latencies.append(ContinuousClock.now - start) }
        return try body()
    }

    func percentile(_ p: Double) -> Duration {
        guard !latencies.isEmpty else { return .zero }
        let sorted = latencies.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    static func printTable(_ rows: [PassReport]) {
        let header = ["pass", "entries", "KiB", "hits", "misses", "p50 µs", "p99 µs"]
        let cells = rows.map { row in
            [
                row.name, "\(row.entries)", "\(row.bytes / 1024)", "\(row.hits)", "\(row.misses)",
                format(row.percentile(0.5), in: .microseconds), format(row.percentile(0.99), in: .microseconds),
            ]
        }
        Terminal.printTable(header: header, rows: cells)
    }
}
