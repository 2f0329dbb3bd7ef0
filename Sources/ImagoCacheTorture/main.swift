// A child process for the crash-consistency tests. It opens a DiskCache and
// performs random stores, removals, reads and snapshots until it is killed,
// announcing each operation before ("B") and after ("E") it, so the parent
// knows exactly which operation was in flight when SIGKILL arrived.
//
// Usage: ImagoCacheTorture FOLDER SEED FIRST_VERSION
// Output lines: "B store KEY VERSION", "B remove KEY", "E", "OPEN", "FAIL message"
import Foundation
import Imago
import ImagoSandbox

let arguments = CommandLine.arguments
guard arguments.count == 4, let seed = UInt64(arguments[2]), var version = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: ImagoCacheTorture FOLDER SEED FIRST_VERSION\n".utf8))
    exit(2)
}

func say(_ line: String) {
    // Unbuffered: each line must reach the parent before the next step. A
    // parent that is gone (a closed pipe) ends the run.
    do { try FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8)) } catch { exit(3) }
}

let cache: DiskCache
do {
    cache = try DiskCache(path: arguments[1], configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
} catch {
    say("FAIL \(error)")
    exit(1)
}
say("OPEN")

var generator = SeededGenerator(seed: seed)
while true {
    let key = "key-\(Int.random(in: 0..<64, using: &generator))"
    switch Int.random(in: 0..<100, using: &generator) {
    case 0..<60:
        version += 1
        let value = TortureValue(key: key, version: version)
        say("B store \(key) \(version)")
        do {
            try cache.storeData(value.body, metadata: value.metadata, forKey: key)
        } catch {
            say("FAIL \(error)")
            exit(1)
        }
    case 60..<75:
        say("B remove \(key)")
        do {
            try cache.removeData(forKey: key)
        } catch {
            say("FAIL \(error)")
            exit(1)
        }
    case 75..<95:
        say("B read \(key)")
        if let entry = cache.cachedData(forKey: key), TortureValue(metadata: entry.metadata)?.body != entry.data {
            say("FAIL wrong data for \(key)")
            exit(1)
        }
    default:
        say("B flush")
        do {
            try cache.flush()
        } catch {
            say("FAIL \(error)")
            exit(1)
        }
    }
    say("E")
}
