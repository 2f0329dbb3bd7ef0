import Foundation
import ImagoSandbox
import Testing

@testable import Imago

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("DiskCache crash consistency")
struct DiskCacheCrashTests {
    /// What the child said it did: the effects of completed operations, and
    /// the one it had begun when it was killed.
    struct ChildLog {
        enum Operation: Equatable {
            case store(key: String, version: Int)
            case remove(key: String)
            case other
        }

        var completed: [Operation] = []
        var inFlight: Operation?
        var opened = false
        var failure: String?
        var lastVersion = 0

        mutating func consume(_ line: Substring) {
            let words = line.split(separator: " ")
            switch words.first {
            case "OPEN": opened = true
            case "E":
                if let inFlight { completed.append(inFlight) }
                inFlight = nil
            case "B" where words.count == 4 && words[1] == "store":
                lastVersion = Int(words[3]) ?? lastVersion
                inFlight = .store(key: String(words[2]), version: lastVersion)
            case "B" where words.count == 3 && words[1] == "remove":
                inFlight = .remove(key: String(words[2]))
            case "B": inFlight = .other
            case "FAIL": failure = String(line)
            default: failure = "unexpected line: \(line)"
            }
        }
    }

    /// Kills per run: 200 in the suite; `scripts/crash-test.sh` runs 1,000
    /// (IMAGO_CRASH_KILLS) and reports the count and the time.
    static let kills = ProcessInfo.processInfo.environment["IMAGO_CRASH_KILLS"].flatMap(Int.init).map { max(20, $0) } ?? 200

    @Test(
        "SIGKILL at random moments (200, or IMAGO_CRASH_KILLS): every entry is whole or absent, nothing acknowledged is lost, and the accounting matches the disk"
    )
    func killRepeatedly() throws {
        let folder = TemporaryDirectory("imago-crash")
        let executable = try #require(BuiltExecutable.path("ImagoCacheTorture"), "ImagoCacheTorture was not built next to the tests")
        var generator = SeededGenerator(seed: 7)
        var model: [String: Int] = [:]  // key -> version on disk
        var nextVersion = 0
        var killsDuringOperation = 0

        for round in 0..<Self.kills {
            // Given a child storing, removing, reading and snapshotting
            let child = try TortureChild(executable: executable, arguments: [folder.path, "\(round)", "\(nextVersion)"])
            var log = ChildLog()
            let completedBeforeKill = Int.random(in: 0..<120, using: &generator)
            while log.completed.count < completedBeforeKill, log.failure == nil, let line = child.readLine() {
                log.consume(line)
                if round % 25 == 0, line == "OPEN" {
                    // While the child holds the folder, nobody else may open it.
                    #expect(throws: DiskCacheError.self) { _ = try DiskCache(path: folder.path) }
                }
            }
            // When it is killed at a random moment
            if Bool.random(using: &generator) { child.spin(microseconds: Int.random(in: 0..<3000, using: &generator)) }
            child.kill()
            while let line = child.readLine() { log.consume(line) }
            #expect(log.failure == nil, "round \(round): \(log.failure ?? "")")
            if log.inFlight != nil { killsDuringOperation += 1 }
            nextVersion = max(nextVersion, log.lastVersion) + 1

            // Then a reopened cache holds exactly the acknowledged state, or
            // that state plus the operation in flight
            for operation in log.completed { Self.apply(operation, to: &model) }
            var withInFlight = model
            if let inFlight = log.inFlight { Self.apply(inFlight, to: &withInFlight) }
            let cache = try DiskCache(path: folder.path, configuration: .init(sizeLimit: 1 << 30, maintenanceInterval: nil))
            var found: [String: Int] = [:]
            for k in 0..<64 {
                let key = "key-\(k)"
                guard let entry = cache.cachedData(forKey: key) else { continue }
                let value = try #require(TortureValue(metadata: entry.metadata), "round \(round): \(key) has foreign metadata")
                #expect(value.key == key && entry.data == value.body, "round \(round): \(key) v\(value.version) is not whole")
                found[key] = value.version
            }
            #expect(found == model || found == withInFlight, "round \(round): found \(found.count) entries, expected \(model.count)")
            expectConsistent(cache)
            cache.close()
            model = found
            if log.failure != nil || found != model { break }
        }
        // The kills landed inside operations, not only between them. How many
        // depends on scheduling (about half on an idle machine, fewer under load).
        print("crash test: \(killsDuringOperation) of \(Self.kills) kills landed inside an operation")
        #expect(killsDuringOperation >= Self.kills / 20)
    }

    static func apply(_ operation: ChildLog.Operation, to model: inout [String: Int]) {
        switch operation {
        case .store(let key, let version): model[key] = version
        case .remove(let key): model[key] = nil
        case .other: break
        }
    }
}

/// A child process whose standard output is read line by line.
final class TortureChild {
    private let process: Subprocess
    private var buffer = Data()
    private var finished = false

    init(executable: String, arguments: [String]) throws {
        process = try Subprocess(executable, arguments: arguments)
    }

    /// The next line, or nil at end of output.
    func readLine() -> Substring? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return Substring(line)
            }
            if finished { return nil }
            let chunk = process.output?.availableData ?? Data()
            if chunk.isEmpty { finished = true } else { buffer.append(chunk) }
        }
    }

    /// Lets the child run a little further, at a moment not aligned with its output.
    func spin(microseconds: Int) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(microseconds) * 1000
        while DispatchTime.now().uptimeNanoseconds < deadline {}
    }

    func kill() {
        process.send(SIGKILL)
        process.wait()
    }
}
