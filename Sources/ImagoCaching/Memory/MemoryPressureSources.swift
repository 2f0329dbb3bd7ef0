import Foundation
import ImagoConcurrency

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Something that signals memory pressure through a file descriptor, which
/// ``MemoryPressureMonitor`` polls: Linux's pressure-stall triggers and
/// control-group events, or an app's own signal.
public protocol MemoryPressureSource: AnyObject, Sendable, CustomStringConvertible {
    /// The descriptor to poll and the events to poll it for (`POLLPRI` or `POLLIN`).
    var pollDescriptor: (descriptor: Int32, events: Int16) { get }
    /// Reads what made the descriptor ready (`returnedEvents` from poll).
    func consume(_ returnedEvents: Int16) -> MemoryPressureReading
    /// Closes the descriptor; the monitor calls it once, when it stops.
    func close()
}

/// What a ready descriptor said.
public enum MemoryPressureReading: Sendable, Equatable {
    /// Memory is short.
    case pressure
    /// Nothing to act on (a counter that did not grow).
    case nothing
    /// The source is gone (its control group was removed): stop polling it.
    case closed
}

/// A pressure-stall (PSI) trigger: an event when tasks were stalled on
/// memory for more than `stall` within a `window` (Linux 5.2 and later),
/// on a control group's `memory.pressure` or the machine's
/// `/proc/pressure/memory`.
public final class PSIMemoryTrigger: MemoryPressureSource {
    private let descriptor: Int32
    private let path: String

    /// Opens a trigger on `path`, or nil where the kernel has no PSI or
    /// refuses the trigger. Without CAP_SYS_RESOURCE the window must be a
    /// multiple of 2 s; the default is 150 ms of stall in 2 s.
    public init?(path: String, stall: Duration = .milliseconds(150), window: Duration = .seconds(2)) {
        let descriptor = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let trigger = "some \(stall.nanoseconds / 1000) \(window.nanoseconds / 1000)"
        let written = trigger.withCString { write(descriptor, $0, strlen($0) + 1) }
        guard written > 0 else {
            Glibc.close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        self.path = path
    }

    public var pollDescriptor: (descriptor: Int32, events: Int16) { (descriptor, Int16(POLLPRI)) }

    public func consume(_ returnedEvents: Int16) -> MemoryPressureReading {
        if returnedEvents & Int16(POLLERR | POLLNVAL) != 0 { return .closed }
        return returnedEvents & Int16(POLLPRI) != 0 ? .pressure : .nothing
    }

    public func close() { Glibc.close(descriptor) }

    public var description: String { "PSI trigger on \(path)" }
}

/// A cgroup v2 group going over its `memory.high`: the `high` counter of
/// its `memory.events` grows (the kernel then throttles and reclaims).
public final class CgroupMemoryHighEvents: MemoryPressureSource {
    private let descriptor: Int32
    private let path: String
    private let lastCount: Locked<Int>

    /// Watches `folder`/memory.events, or nil where there is none.
    public init?(folder: String) {
        path = folder + "/memory.events"
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        lastCount = Locked(0)
        _ = consume(0)
    }

    public var pollDescriptor: (descriptor: Int32, events: Int16) { (descriptor, Int16(POLLPRI)) }

    /// The file reports a change as POLLPRI with POLLERR; reading it from
    /// the start acknowledges the change.
    public func consume(_ returnedEvents: Int16) -> MemoryPressureReading {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return .closed }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        let high =
            text.split(separator: "\n").lazy.compactMap { line -> Int? in
                let fields = line.split(separator: " ")
                return fields.count == 2 && fields[0] == "high" ? Int(fields[1]) : nil
            }.first ?? 0
        return lastCount.withLock { last in
            defer { last = max(last, high) }
            return high > last ? .pressure : .nothing
        }
    }

    public func close() { Glibc.close(descriptor) }

    public var description: String { "memory.high events of \(path)" }
}

/// A cgroup v1 memory group's `memory.pressure_level` notification, through
/// an eventfd registered with `cgroup.event_control`.
public final class CgroupV1PressureLevel: MemoryPressureSource {
    private let eventDescriptor: Int32
    private let levelDescriptor: Int32
    private let folder: String
    private let level: String

    /// Registers for `level` ("low": any reclaim, "medium": swapping or
    /// reclaiming hard, "critical": close to out of memory) on the v1
    /// memory group `folder`, or nil where that is not possible.
    public init?(folder: String, level: String = "medium") {
        self.folder = folder
        self.level = level
        // EFD_CLOEXEC and EFD_NONBLOCK are O_CLOEXEC and O_NONBLOCK.
        eventDescriptor = Self.eventfd.map { $0(0, O_CLOEXEC | O_NONBLOCK) } ?? -1
        levelDescriptor = open(folder + "/memory.pressure_level", O_RDONLY | O_CLOEXEC)
        let control = open(folder + "/cgroup.event_control", O_WRONLY | O_CLOEXEC)
        defer { if control >= 0 { Glibc.close(control) } }
        let registration = "\(eventDescriptor) \(levelDescriptor) \(level)"
        guard eventDescriptor >= 0, levelDescriptor >= 0, control >= 0,
            registration.withCString({ write(control, $0, strlen($0)) }) > 0
        else {
            if eventDescriptor >= 0 { Glibc.close(eventDescriptor) }
            if levelDescriptor >= 0 { Glibc.close(levelDescriptor) }
            return nil
        }
    }

    /// glibc's `eventfd`, which the Glibc module does not declare.
    private static let eventfd: (@convention(c) (UInt32, Int32) -> Int32)? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "eventfd")
        .map { unsafeBitCast($0, to: (@convention(c) (UInt32, Int32) -> Int32).self) }

    public var pollDescriptor: (descriptor: Int32, events: Int16) { (eventDescriptor, Int16(POLLIN)) }

    public func consume(_ returnedEvents: Int16) -> MemoryPressureReading {
        var count: UInt64 = 0
        guard read(eventDescriptor, &count, 8) == 8 else { return .nothing }
        return .pressure
    }

    public func close() {
        Glibc.close(eventDescriptor)
        Glibc.close(levelDescriptor)
    }

    public var description: String { "\(level) pressure level of \(folder)" }
}

extension MemoryPressureMonitor {
    /// The sources that watch this process's own control group: cgroup v2's
    /// PSI trigger and memory.high events, or cgroup v1's pressure level;
    /// the machine-wide PSI trigger only when none of those opens.
    public static func systemSources(cgroupList: String? = nil, cgroupRoot: String = "/sys/fs/cgroup") -> [any MemoryPressureSource] {
        let list = cgroupList ?? (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        var sources: [any MemoryPressureSource] = []
        for line in list.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2].hasPrefix("/") else { continue }
            let path = fields[2] == "/" ? "" : String(fields[2])
            if fields[0] == "0", fields[1].isEmpty {
                let folder = MemoryBudget.unifiedRoot(cgroupRoot) + path
                // The root group has no memory.high; its memory.pressure is the machine's.
                guard !path.isEmpty else { continue }
                if let trigger = PSIMemoryTrigger(path: folder + "/memory.pressure") { sources.append(trigger) }
                if let events = CgroupMemoryHighEvents(folder: folder) { sources.append(events) }
            } else if fields[1].split(separator: ",").contains("memory") {
                if let level = CgroupV1PressureLevel(folder: cgroupRoot + "/memory" + path) { sources.append(level) }
            }
        }
        if sources.isEmpty, let machine = PSIMemoryTrigger(path: "/proc/pressure/memory") { sources.append(machine) }
        return sources
    }
}
