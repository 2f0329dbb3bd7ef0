import Foundation
import ImagoConcurrency
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Memory budget and pressure: the cgroup's limit, trims on pressure, escalation")
struct MemoryPressureTests {
    @Test("the budget is the tightest limit up the cgroup v2 tree, else physical memory")
    func budgetV2() throws {
        let root = TemporaryDirectory("imago-cgroup")
        try write("", to: root.appending("cgroup.controllers"))
        try write("max\n", to: root.appending("app/memory.max"))
        try write("536870912\n", to: root.appending("app/worker/memory.max"))
        try write("max\n", to: root.appending("app/worker/memory.high"))
        let budget = MemoryBudget(cgroupList: "0::/app/worker\n", cgroupRoot: root.path, physicalMemory: 8 << 30)
        #expect(budget.bytes == 512 << 20)
        #expect(budget.source == root.appending("app/worker/memory.max"))
        // memory.high below memory.max is the tighter budget; a parent's limit counts too.
        try write("268435456\n", to: root.appending("app/worker/memory.high"))
        try write("134217728\n", to: root.appending("app/memory.max"))
        #expect(MemoryBudget(cgroupList: "0::/app/worker", cgroupRoot: root.path, physicalMemory: 8 << 30).bytes == 128 << 20)
        // A machine smaller than the limits is the budget.
        let small = MemoryBudget(cgroupList: "0::/app/worker", cgroupRoot: root.path, physicalMemory: 64 << 20)
        #expect(small == MemoryBudget(cgroupList: "", cgroupRoot: root.path, physicalMemory: 64 << 20))
        #expect(small.source == "physical memory")
    }

    @Test("cgroup v1: memory.limit_in_bytes, its 'no limit' value ignored, under a hybrid mount")
    func budgetV1() throws {
        let root = TemporaryDirectory("imago-cgroup")
        try write("9223372036854771712\n", to: root.appending("memory/docker/abc/memory.limit_in_bytes"))
        try write("268435456\n", to: root.appending("memory/docker/memory.limit_in_bytes"))
        let list = "12:pids:/docker/abc\n4:cpu,memory:/docker/abc\n0::/\n"
        let budget = MemoryBudget(cgroupList: list, cgroupRoot: root.path, physicalMemory: 8 << 30)
        #expect(budget.bytes == 256 << 20)
        #expect(budget.source == root.appending("memory/docker/memory.limit_in_bytes"))
        // Garbage in the files or the list is no limit.
        try write("lots\n", to: root.appending("memory/docker/memory.limit_in_bytes"))
        #expect(MemoryBudget(cgroupList: list + "garbage\n::\n", cgroupRoot: root.path, physicalMemory: 8 << 30).bytes == 8 << 30)
    }

    @Test("the default cost limit follows the budget: 20%, at most 512 MiB")
    func defaultCostLimit() {
        let expected = Int(min(MemoryBudget.current.bytes / 5, 512 << 20))
        #expect(MemoryCache<Int, Int>.Configuration.defaultCostLimit == expected)
    }

    @Test("escalation: half at first, everything when pressure returns within the window, half again after a quiet spell")
    func escalation() {
        var escalation = PressureEscalation(window: .seconds(10))
        #expect(escalation.trim(at: .seconds(100)) == .toHalf)
        #expect(escalation.trim(at: .seconds(102)) == .toEmpty)
        #expect(escalation.trim(at: .seconds(111)) == .toEmpty)
        #expect(escalation.trim(at: .seconds(122)) == .toHalf)
    }

    @Test("a memory cache trims to half its cost, then to empty")
    func cacheTrim() {
        let cache = MemoryCache<Int, Int>(configuration: .init(costLimit: 1 << 20))
        for key in 0..<100 { cache.set(key, forKey: key, cost: 100) }
        cache.trimMemory(.toHalf)
        #expect(cache.totalCost <= 5_000 && cache.totalCost > 0)
        cache.trimMemory(.toEmpty)
        #expect(cache.totalCount == 0)
    }

    @Test("the monitor turns a source's events into trims, drops a closed source, and stops")
    func monitorWithFakeSource() throws {
        let source = try PipeSource()
        let closing = try PipeSource(reading: .closed)
        let trims = Locked<[MemoryTrim]>([])
        let monitor = MemoryPressureMonitor(sources: [closing, source], escalationWindow: .seconds(3_600)) { trim in
            trims.withLock { $0.append(trim) }
            trims.signalAll()
        }
        closing.signal()
        source.signal()
        #expect(trims.withLockWhenReady { $0.count >= 1 ? $0 : nil } == [.toHalf])
        source.signal()
        #expect(trims.withLockWhenReady { $0.count >= 2 ? $0 : nil } == [.toHalf, .toEmpty])
        monitor.stop()
        #expect(source.isClosed && closing.isClosed)
        monitor.stop()
    }

    @Test("the pipeline's trimMemory trims its memory cache")
    func pipelineTrim() {
        let cache = MemoryCache<ImageCacheKey, Image>(configuration: .init(costLimit: 1 << 30))
        let pipeline = ImagePipeline(configuration: .init(imageCache: cache, trimsMemoryOnPressure: false))
        let image = Image(width: 8, height: 8, pixelFormat: .rgb8, pixels: [UInt8](repeating: 0, count: 192))!
        for index in 0..<200 { pipeline.cache.storeImage(image, forKey: ImageCacheKey("image-\(index)")) }
        pipeline.cache.trimMemory(.toHalf)
        // Each of the shards trims to its share of the half, rounded down.
        #expect((60...100).contains(cache.totalCount), "\(cache.totalCount)")
        pipeline.cache.trimMemory(.toEmpty)
        #expect(cache.totalCount == 0)
    }

    @Test("for real: a cgroup writing past its memory limit makes the monitor trim (root and a memory cgroup needed)")
    func realCgroup() throws {
        guard getuid() == 0 else {
            print("MemoryPressureTests.realCgroup skipped: creating a cgroup needs root")
            return
        }
        let v2Root = MemoryBudget.unifiedRoot("/sys/fs/cgroup")
        let v2Controllers = (try? String(contentsOfFile: v2Root + "/cgroup.subtree_control", encoding: .utf8)) ?? ""
        let group: (folder: String, limit: String, sources: () -> [any MemoryPressureSource])
        if v2Controllers.split(separator: " ").contains(where: { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "memory" }) {
            let folder = v2Root + "/imago-test-\(getpid())"
            group = (
                folder, "memory.high",
                {
                    [PSIMemoryTrigger(path: folder + "/memory.pressure") as (any MemoryPressureSource)?, CgroupMemoryHighEvents(folder: folder)]
                        .compactMap { $0 }
                }
            )
        } else if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory/cgroup.procs") {
            // Created beside this process's group, not below it, so the
            // pressure made here reaches no pipeline of this test run.
            print("MemoryPressureTests.realCgroup: no cgroup v2 memory controller (\(v2Root)); using cgroup v1's")
            let folder = "/sys/fs/cgroup/memory/imago-test-\(getpid())"
            // Level "low" (any reclaim): a writer's clean pages are reclaimed
            // too easily to reach "medium", the default, reliably.
            group = (folder, "memory.limit_in_bytes", { [CgroupV1PressureLevel(folder: folder, level: "low")].compactMap { $0 } })
        } else {
            print("MemoryPressureTests.realCgroup skipped: no memory cgroup controller, v1 or v2")
            return
        }
        guard mkdir(group.folder, 0o755) == 0 || errno == EEXIST else {
            print("MemoryPressureTests.realCgroup skipped: cannot create \(group.folder): \(String(cString: strerror(errno)))")
            return
        }
        defer { rmdir(group.folder) }
        try write("\(64 << 20)", to: group.folder + "/" + group.limit)
        let sources = group.sources()
        try #require(!sources.isEmpty, "no pressure source opened on \(group.folder)")

        let cache = MemoryCache<Int, [UInt8]>(configuration: .init(costLimit: 1 << 30))
        for key in 0..<64 { cache.set([], forKey: key, cost: 1 << 20) }
        // The trims seen, and whether the writer has finished.
        let events = Locked<(trims: [MemoryTrim], writerDone: Bool)>(([], false))
        let monitor = MemoryPressureMonitor(sources: sources) { trim in
            cache.trimMemory(trim)
            events.withLock { $0.trims.append(trim) }
            events.signalAll()
        }
        defer { monitor.stop() }

        // A child in the group writes a 256 MiB file 8 times over: its dirty
        // pages are charged to the group, which must reclaim to stay under
        // 64 MiB. The test waits for the first trim or the writer's end.
        let scratch = TemporaryDirectory("imago-pressure")
        let fill = "dd if=/dev/zero of=\(scratch.appending("fill")) bs=1M count=256 conv=notrunc status=none"
        let writer = try Subprocess(
            "/bin/sh", arguments: ["-c", "echo $$ > \(group.folder)/cgroup.procs && for i in 1 2 3 4 5 6 7 8; do \(fill); done"],
            pipesOutput: false)
        Thread {
            writer.wait()
            events.withLock { $0.writerDone = true }
            events.signalAll()
        }.start()
        defer {
            writer.send(SIGTERM)
            writer.wait()
        }
        let first = events.withLockWhenReady { events -> MemoryTrim?? in
            if let trim = events.trims.first { return .some(trim) }
            return events.writerDone ? .some(nil) : nil
        }
        #expect(first == .toHalf, "no pressure event; the writer ended: \(events.withLock { $0.writerDone })")
        #expect(cache.totalCost <= 32 << 20)
        print(
            "MemoryPressureTests.realCgroup: \(sources.map(\.description)) reported pressure; the cache was trimmed to \(cache.totalCost >> 20) MiB")
    }

    private func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }
}

/// A pressure source the test signals by writing to a pipe.
private final class PipeSource: MemoryPressureSource {
    private let ends: (read: Int32, write: Int32)
    private let reading: MemoryPressureReading
    private let closed = Locked(false)

    init(reading: MemoryPressureReading = .pressure) throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
        self.ends = (ends[0], ends[1])
        self.reading = reading
    }

    func signal() {
        var byte: UInt8 = 1
        _ = write(ends.write, &byte, 1)
    }

    var isClosed: Bool { closed.withLock { $0 } }

    var pollDescriptor: (descriptor: Int32, events: Int16) { (ends.read, Int16(POLLIN)) }

    func consume(_ returnedEvents: Int16) -> MemoryPressureReading {
        var byte: UInt8 = 0
        _ = read(ends.read, &byte, 1)
        return reading
    }

    func close() {
        Glibc.close(ends.read)
        Glibc.close(ends.write)
        closed.withLock { $0 = true }
    }

    var description: String { "a pipe" }
}
