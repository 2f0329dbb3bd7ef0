import Foundation
import ImagoCaching

#if canImport(Glibc)
    import Glibc
#endif

// Prints what each DiskCache durability costs a store: 20 KB entries stored
// one after another in a new folder, with and without the two fsyncs of
// `.powerLoss`, interleaved over several rounds (each after a sync(2), so
// that earlier rounds' write-back stays out); the median per store.
//
//     swift run -c release DiskDurability [folder-parent] [stores] [rounds]
let arguments = CommandLine.arguments
let parent = arguments.count > 1 ? arguments[1] : FileManager.default.temporaryDirectory.path
let stores = arguments.count > 2 ? Int(arguments[2]) ?? 300 : 300
let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 5 : 5
let body = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

/// Microseconds per store for one round in a new folder.
func microsecondsPerStore(_ durability: DiskCache.Durability) throws -> Double {
    let folder = parent + "/imago-durability-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let cache = try DiskCache(path: folder, configuration: .init(maintenanceInterval: nil, durability: durability))
    defer { cache.close() }
    // Earlier rounds' dirty pages (and this folder's creation) go to the
    // device first, so that their write-back does not land in this round.
    sync()
    let clock = ContinuousClock()
    let elapsed = try clock.measure {
        for index in 0..<stores { try cache.storeData(body, forKey: "entry-\(index)") }
    }
    let (seconds, attoseconds) = elapsed.components
    return (Double(seconds) + Double(attoseconds) * 1e-18) * 1e6 / Double(stores)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

var results: [DiskCache.Durability: [Double]] = [:]
for _ in 0..<rounds {
    for durability in [DiskCache.Durability.processCrash, .powerLoss] {
        results[durability, default: []].append(try microsecondsPerStore(durability))
    }
}
let crash = median(results[.processCrash]!)
let power = median(results[.powerLoss]!)
print("DiskDurability: \(stores) stores of 20 KB x \(rounds) rounds under \(parent)")
print(String(format: "processCrash  %8.1f µs/store (median)", crash))
print(String(format: "powerLoss     %8.1f µs/store (median), %.1fx", power, power / crash))
