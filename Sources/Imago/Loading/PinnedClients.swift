import AsyncHTTPClient
import Foundation
import ImagoConcurrency

/// HTTP clients that connect each host name to one address a
/// ``SourceGuard`` approved (AsyncHTTPClient's DNS override, set per client),
/// kept for reuse of their connections. Clients no request is using are shut
/// down when more than `capacity` are kept, least recently used first.
final class PinnedClients: Sendable {
    private struct Entry {
        let client: HTTPClient
        var leases = 0
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
    }

    private let state = Locked(State())
    private let capacity: Int
    private let makeConfiguration: @Sendable ([String: String]) -> HTTPClient.Configuration

    /// `makeConfiguration` gives a client's configuration for its DNS override.
    init(capacity: Int = 64, makeConfiguration: @escaping @Sendable ([String: String]) -> HTTPClient.Configuration) {
        self.capacity = capacity
        self.makeConfiguration = makeConfiguration
    }

    deinit {
        for entry in state.withLock({ $0.entries.values }) { entry.client.shutdown { _ in } }
    }

    /// A client that connects `host` to `address`; call `release` once its
    /// response has been read.
    func lease(host: String, address: String) -> (client: HTTPClient, release: @Sendable () -> Void) {
        let key = host + "\u{0}" + address
        let (client, idle) = state.withLock { state -> (HTTPClient, [HTTPClient]) in
            state.clock += 1
            if var entry = state.entries[key] {
                entry.leases += 1
                entry.lastUse = state.clock
                state.entries[key] = entry
                return (entry.client, [])
            }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: makeConfiguration([host: address]))
            state.entries[key] = Entry(client: client, leases: 1, lastUse: state.clock)
            var evicted: [HTTPClient] = []
            let idleKeys = state.entries.filter { $0.value.leases == 0 }.sorted { $0.value.lastUse < $1.value.lastUse }.map(\.key)
            for idleKey in idleKeys.prefix(max(0, state.entries.count - capacity)) {
                evicted.append(state.entries.removeValue(forKey: idleKey)!.client)
            }
            return (client, evicted)
        }
        for client in idle { client.shutdown { _ in } }
        return (
            client,
            { [state] in
                state.withLock { state in
                    if var entry = state.entries[key] {
                        entry.leases -= 1
                        state.entries[key] = entry
                    }
                }
            }
        )
    }

    /// The number of clients kept (tests).
    var count: Int { state.withLock { $0.entries.count } }
}
