import Foundation
import ImagoConcurrency

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How much memory a cache gives back.
public enum MemoryTrim: Sendable, Equatable {
    /// Evict down to half the current cost: the first response to pressure.
    case toHalf
    /// Evict everything: pressure persisted after a trim to half.
    case toEmpty
}

/// Linux's memory warning: a thread polls the ``MemoryPressureSource``s and
/// calls `handler` with the trim to make, ``MemoryTrim/toHalf`` at the first
/// event and ``MemoryTrim/toEmpty`` when another one follows within
/// `escalationWindow` (pressure persisted).
///
/// Pipelines subscribe to one process-wide monitor (``shared``) on their own;
/// create one only for sources of your own.
public final class MemoryPressureMonitor: Sendable {
    /// What the monitor watches, for logs.
    public let sourceDescriptions: [String]
    private let wake: (read: Int32, write: Int32)
    private let state: Locked<State>

    private struct State {
        var stopped = false
        var threadExited = false
    }

    /// Starts watching `sources`; the monitor owns them and closes them when it stops.
    public init(
        sources: [any MemoryPressureSource], escalationWindow: Duration = .seconds(10),
        handler: @escaping @Sendable (MemoryTrim) -> Void
    ) {
        sourceDescriptions = sources.map(\.description)
        var pipeEnds: [Int32] = [-1, -1]
        if pipe(&pipeEnds) == 0 {
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        } else {
            pipeEnds = [-1, -1]
        }
        wake = (pipeEnds[0], pipeEnds[1])
        let state = Locked(State())
        self.state = state
        let wakeDescriptor = wake.read
        DedicatedThread.start(name: "imago-memory-pressure") {
            Self.watch(sources, wake: wakeDescriptor, escalation: PressureEscalation(window: escalationWindow), handler: handler)
            for source in sources { source.close() }
            state.withLock { $0.threadExited = true }
            state.signalAll()
        }
    }

    deinit { stop() }

    /// Stops watching and waits for the thread to close the sources. Idempotent.
    public func stop() {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        state.withLockWhenReady { $0.threadExited ? () : nil }
        Glibc.close(wake.read)
        Glibc.close(wake.write)
    }

    private static func watch(
        _ sources: [any MemoryPressureSource], wake: Int32, escalation: PressureEscalation,
        handler: @Sendable (MemoryTrim) -> Void
    ) {
        var escalation = escalation
        var live = sources
        let start = ContinuousClock.now
        while wake >= 0 {
            var descriptors =
                [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
                + live.map { pollfd(fd: $0.pollDescriptor.descriptor, events: $0.pollDescriptor.events, revents: 0) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0, descriptors[0].revents == 0 else { return }
            var pressure = false
            var closed: Set<ObjectIdentifier> = []
            for (source, descriptor) in zip(live, descriptors.dropFirst()) where descriptor.revents != 0 {
                switch source.consume(descriptor.revents) {
                case .pressure: pressure = true
                case .nothing: break
                case .closed: closed.insert(ObjectIdentifier(source))
                }
            }
            live.removeAll { closed.contains(ObjectIdentifier($0)) }
            if pressure { handler(escalation.trim(at: ContinuousClock.now - start)) }
        }
    }
}

/// Half at the first event, everything when the next one comes within the
/// window: the pressure outlasted the first trim.
struct PressureEscalation: Sendable {
    let window: Duration
    private var lastEvent: Duration?

    init(window: Duration) {
        self.window = window
    }

    /// The trim for an event at `now` (any monotonic time).
    mutating func trim(at now: Duration) -> MemoryTrim {
        defer { lastEvent = now }
        if let lastEvent, now - lastEvent <= window { return .toEmpty }
        return .toHalf
    }
}

extension MemoryPressureMonitor {
    /// The process-wide monitor over ``systemSources(cgroupList:cgroupRoot:)``,
    /// started by the first subscriber and kept for the process's life.
    /// `subscribe` returns a token: the handler is called until it is released.
    public static func subscribe(_ handler: @escaping @Sendable (MemoryTrim) -> Void) -> Subscription {
        let token = Subscription()
        SharedMonitor.instance.add(token, handler)
        return token
    }

    /// Keeps a handler subscribed to the shared monitor while it is alive.
    public final class Subscription: Sendable {
        fileprivate init() {}
        deinit { SharedMonitor.instance.remove(ObjectIdentifier(self)) }
    }
}

/// The shared monitor and the handlers subscribed to it.
private final class SharedMonitor: Sendable {
    static let instance = SharedMonitor()

    private let handlers = Locked<[ObjectIdentifier: @Sendable (MemoryTrim) -> Void]>([:])
    /// Held, never read: the monitor watches for as long as it lives.
    private let monitor: MemoryPressureMonitor

    private init() {
        let handlers = self.handlers
        monitor = MemoryPressureMonitor(sources: MemoryPressureMonitor.systemSources()) { trim in
            for handler in handlers.withLock({ Array($0.values) }) { handler(trim) }
        }
    }

    func add(_ token: MemoryPressureMonitor.Subscription, _ handler: @escaping @Sendable (MemoryTrim) -> Void) {
        handlers.withLock { $0[ObjectIdentifier(token)] = handler }
    }

    func remove(_ id: ObjectIdentifier) {
        handlers.withLock { $0[id] = nil }
    }
}
