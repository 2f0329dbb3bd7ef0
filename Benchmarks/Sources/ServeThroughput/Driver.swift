import CacheWorkloads
import Foundation

/// Starts the server process on core 0, loads it with wrk on core 1,
/// alternates with the bare loop, and prints the figures.
struct Driver {
    var options: DriverOptions

    /// Each round's rates, and the server process's CPU time per answer
    /// (which other processes on core 0 do not change).
    struct Round {
        var served: WrkResult
        var bare: Double
        var servedCPU: Double
        var bareCPU: Double
        /// The server process's CPU time over the wall time of its phase.
        var servedBusy: Double
    }

    func run() throws {
        let taskset = try executable("taskset")
        let wrk = try executable("wrk")
        let scripts = FileManager.default.temporaryDirectory.appendingPathComponent("serve-throughput-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scripts, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scripts) }
        let transformScript = scripts.appendingPathComponent("transform.lua").path
        let hitsScript = scripts.appendingPathComponent("hits.lua").path
        try WrkScripts.transform.write(toFile: transformScript, atomically: true, encoding: .utf8)
        try WrkScripts.hits.write(toFile: hitsScript, atomically: true, encoding: .utf8)

        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let server = try ChildProcess(taskset, ["-c", "0", me, "serve", options.cacheParent] + (options.validators ? ["validators"] : []))
        defer { server.terminate() }
        let ready = try server.readLine().split(separator: " ").map(String.init)
        guard ready.count >= 4, ready[0] == "ready", let port = Int(ready[1]) else {
            throw BenchmarkFailure(description: "the server process said \(ready.joined(separator: " "))")
        }
        let storeMicroseconds = ready[2]
        let sources = Array(ready[3...])
        print(
            "ServeThroughput: 1024x768 JPEG sources \(options.validators ? "with" : "without") validators, 256 px JPEG q80 thumbnails; "
                + "server (pid \(server.pid)) on core 0, wrk on core 1; cache under \(options.cacheParent)")
        print("  load average \(loadAverage()); DiskCache.store of 12 KB beside the result cache: \(storeMicroseconds) µs")

        func load(_ script: String, connections: Int, seconds: Int, first: Int, layout: String = "box") throws -> WrkResult {
            let arguments =
                [
                    "-c", "1", wrk, "-t1", "-c\(connections)", "-d\(seconds)s", "--timeout", "30s", "-s", script,
                    "http://127.0.0.1:\(port)", "--", String(first), layout,
                ] + sources
            let result = try WrkResult(output: ChildProcess.output(of: taskset, arguments))
            guard result.failures == 0 else { throw BenchmarkFailure(description: "wrk saw \(result.failures) failed requests") }
            return result
        }
        // Warm-up: connections, the heap, the branch predictors.
        _ = try load(transformScript, connections: 2, seconds: 2, first: WrkScripts.warmUpFirst)
        if options.smartCrop {
            try compareSmartCrop { layout, first in
                let before = try processCPUSeconds(server.pid)
                let result = try load(transformScript, connections: 2, seconds: options.secondsPerPhase, first: first, layout: layout)
                return (result, (try processCPUSeconds(server.pid) - before) / Double(result.requests))
            }
            server.writeLine("stop")
            _ = try server.readLine()
            server.wait()
            return
        }

        var rounds: [Round] = []
        for round in 0..<options.rounds {
            let first = round * WrkScripts.perRound
            var served: WrkResult?
            var bare = Double.nan
            var servedCPU = Double.nan
            var bareCPU = Double.nan
            var servedBusy = Double.nan
            for phase in (round.isMultiple(of: 2) ? [0, 1] : [1, 0]) {
                let cpuBefore = try processCPUSeconds(server.pid)
                let start = ContinuousClock.now
                if phase == 0 {
                    let result = try load(transformScript, connections: 2, seconds: options.secondsPerPhase, first: first)
                    let cpu = try processCPUSeconds(server.pid) - cpuBefore
                    served = result
                    servedCPU = cpu / Double(result.requests)
                    servedBusy = cpu / seconds(ContinuousClock.now - start)
                } else if !options.servedOnly {
                    server.writeLine("bare \(options.secondsPerPhase)")
                    let reply = try server.readLine().split(separator: " ")
                    let cpu = try processCPUSeconds(server.pid) - cpuBefore
                    if reply.count == 3, let rate = Double(reply[1]), let count = Double(reply[2]) {
                        bare = rate
                        bareCPU = cpu / count
                    }
                }
                // The server finishes the transformations wrk left in flight.
                Thread.sleep(forTimeInterval: 0.2)
            }
            guard let served else { continue }
            rounds.append(Round(served: served, bare: bare, servedCPU: servedCPU, bareCPU: bareCPU, servedBusy: servedBusy))
            print(
                String(
                    format:
                        "  round %d: served %6.1f/s  bare %6.1f/s  share %3.0f%%   CPU per answer: served %.3f ms, bare %.3f ms, share %3.0f%% (server busy %3.0f%%)",
                    round + 1, served.rate, bare, 100 * served.rate / bare, servedCPU * 1000, bareCPU * 1000, 100 * bareCPU / servedCPU,
                    100 * servedBusy
                ))
        }
        let hits = try load(hitsScript, connections: 16, seconds: 3, first: (options.rounds - 1) * WrkScripts.perRound)
        server.writeLine("stop")
        let closed = try server.readLine()
        server.wait()

        let served = median(rounds.map(\.served.rate))
        let bare = median(rounds.map(\.bare))
        let shares = rounds.map { 100 * $0.served.rate / $0.bare }
        print(String(format: "  transformations through imago serve  %6.1f/s  p99 %.1f ms", served, median(rounds.map(\.served.p99)) * 1000))
        print(String(format: "  the same in a bare loop               %6.1f/s", bare))
        print(
            String(
                format: "  share                                 %5.0f%%  (median of the rounds' shares: %.0f%%; goal: at least 85%%)",
                100 * served / bare, median(shares)))
        print(
            String(
                format: "  CPU time per answer: served %.3f ms, bare %.3f ms, share %.0f%% (median of the rounds' shares)",
                median(rounds.map(\.servedCPU)) * 1000, median(rounds.map(\.bareCPU)) * 1000,
                median(rounds.map { 100 * $0.bareCPU / $0.servedCPU })))
        print(String(format: "  result-cache hits, 16 connections    %7.0f/s  p99 %.2f ms", hits.rate, hits.p99 * 1000))
        print("  \(closed); load average \(loadAverage())")
    }

    /// Rounds of the same answers filled to 256x256, cut at the centre and
    /// by the smart crop, in alternating order; prints each round's rates
    /// and CPU time per answer, and the medians of the smart crop's share.
    private func compareSmartCrop(_ load: (_ layout: String, _ first: Int) throws -> (WrkResult, cpu: Double)) throws {
        var costs: [Double] = []
        var rates: [Double] = []
        for round in 0..<options.rounds {
            var measured: [String: (WrkResult, cpu: Double)] = [:]
            for layout in round.isMultiple(of: 2) ? ["fill", "smart"] : ["smart", "fill"] {
                measured[layout] = try load(layout, round * WrkScripts.perRound)
                Thread.sleep(forTimeInterval: 0.2)
            }
            guard let fill = measured["fill"], let smart = measured["smart"] else { continue }
            costs.append(smart.cpu / fill.cpu)
            rates.append(smart.0.rate / fill.0.rate)
            print(
                String(
                    format: "  round %d: centre %6.1f/s %.3f ms CPU per answer   smart %6.1f/s %.3f ms   smart's extra CPU %+5.1f%%  rate %+5.1f%%",
                    round + 1, fill.0.rate, fill.cpu * 1000, smart.0.rate, smart.cpu * 1000, 100 * (costs.last! - 1), 100 * (rates.last! - 1)))
        }
        print(
            String(
                format: "  smart crop against the centre cut, medians of %d rounds: CPU per answer %+.1f%%, rate %+.1f%% (goal: at most +15%% cost)",
                costs.count, 100 * (median(costs) - 1), 100 * (median(rates) - 1)))
    }

    /// User and system time of every thread the process has had, from /proc (in clock ticks, 10 ms).
    private func processCPUSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command's name in parentheses: state is field 3, utime 14, stime 15.
        guard let close = stat.lastIndex(of: ")") else { throw BenchmarkFailure(description: "bad /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchmarkFailure(description: "bad /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The full path of a program on PATH.
    private func executable(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        throw BenchmarkFailure(description: "\(name) is not installed (apt-get install -y \(name == "wrk" ? "wrk" : "util-linux"))")
    }
}

/// What wrk's `done()` reports: `result <requests> <microseconds> <status errors> <socket errors> <p99 µs>`.
struct WrkResult {
    var requests: Int
    var rate: Double
    var p99: Double
    var failures: Int

    init(output: String) throws {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("result ") }) else {
            throw BenchmarkFailure(description: "no result from wrk:\n\(output)")
        }
        let fields = line.split(separator: " ").compactMap { Double($0) }
        guard fields.count == 5, fields[1] > 0 else { throw BenchmarkFailure(description: "bad wrk result: \(line)") }
        requests = Int(fields[0])
        rate = fields[0] / (fields[1] / 1e6)
        failures = Int(fields[2] + fields[3])
        p99 = fields[4] / 1e6
    }
}

/// A child process with its standard input and output on pipes.
final class ChildProcess {
    private let process = Process()
    private let input = Pipe(), output = Pipe()
    private var buffer = Data()

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The next line the child prints; throws if it exits first.
    func readLine() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer = Data(buffer[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw BenchmarkFailure(description: "the server process ended") }
            buffer.append(chunk)
        }
    }

    func writeLine(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    func wait() { process.waitUntilExit() }

    func terminate() {
        if process.isRunning { process.terminate() }
    }

    /// Runs a program to its end; what it printed.
    static func output(of executable: String, _ arguments: [String]) throws -> String {
        let child = try ChildProcess(executable, arguments)
        try? child.input.fileHandleForWriting.close()
        let data = child.output.fileHandleForReading.readDataToEndOfFile()
        child.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
