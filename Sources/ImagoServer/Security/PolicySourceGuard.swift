import Foundation
import Imago
import ImagoConcurrency

#if canImport(Glibc)
    import Glibc
#endif

/// The server's ``SourceGuard``: the URL must pass the ``SourcePolicy``, and
/// so must every address its host resolves to (numeric spellings such as
/// `2130706433` or `0x7f.1` resolve too, so they are checked as what they
/// are). The loader then connects to the first address, and nowhere else.
public struct PolicySourceGuard: SourceGuard {
    public let policy: SourcePolicy
    /// The threads names are looked up on (a lookup can block for seconds).
    private let threads: PriorityThreadPool

    /// A guard with eight threads of its own for name lookups.
    public init(policy: SourcePolicy) {
        self.init(policy: policy, threads: PriorityThreadPool(threads: 8, name: "imago-dns"))
    }

    /// A guard that looks names up on `threads` (its owner's blocking-I/O threads).
    package init(policy: SourcePolicy, threads: PriorityThreadPool) {
        self.policy = policy
        self.threads = threads
    }

    public func address(for url: URL) async throws(DataLoadingError) -> String {
        do {
            _ = try policy.check(url: url.absoluteString)
        } catch {
            throw DataLoadingError(.refused(error.description), url: url, underlying: error)
        }
        guard let host = url.host else { throw DataLoadingError(.invalidURL, url: url) }
        // URL keeps the brackets of an IPv6 literal in some spellings.
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        // An address in its standard spelling is what it resolves to: no trip
        // to the resolver's threads. Every other spelling, and every name, is resolved.
        let addresses: [IPAddress]
        if let literal = IPAddress(bare) { addresses = [literal] } else { addresses = await threads.run { Self.resolveBlocking(bare) } }
        if let refusal = policy.refusal(for: addresses, host: bare) {
            if case .unresolvable = refusal { throw DataLoadingError(.network, url: url, underlying: refusal) }
            throw DataLoadingError(.refused(refusal.description), url: url, underlying: refusal)
        }
        return addresses[0].description
    }

    /// The addresses `host` resolves to (getaddrinfo: it blocks).
    static func resolveBlocking(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
            guard let socketAddress = entry.pointee.ai_addr else { continue }
            let bytes: [UInt8]
            switch Int32(entry.pointee.ai_family) {
            case AF_INET:
                bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                }
            case AF_INET6:
                bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
            default:
                continue
            }
            if let address = IPAddress(bytes: bytes), !addresses.contains(address) { addresses.append(address) }
        }
        return addresses
    }
}
