import Foundation

/// Decides, before every connection (the first URL and each redirect), which
/// address a URL's host may be reached at. With a guard set,
/// ``HTTPDataLoader`` follows redirects itself, asks the guard at each hop,
/// and connects to the address it returns without resolving the host again:
/// a DNS answer that changes between the check and the connection (DNS
/// rebinding) cannot get past it. TLS still verifies the host name.
///
/// An image service uses this to refuse loopback and private addresses; a
/// guard that throws ``DataLoadingError/Code/refused(_:)`` stops the load
/// before any connection is attempted.
public protocol SourceGuard: Sendable {
    /// The numeric address (IPv4 or IPv6 text) to connect to for `url`.
    func address(for url: URL) async throws(DataLoadingError) -> String
}
