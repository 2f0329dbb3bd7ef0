#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 address as its bytes (4 or 16), big-endian.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    /// `bytes` when there are 4 or 16 of them.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A numeric address in its standard spelling only (dotted quad, or
    /// IPv6 text): the forms a policy is written in. A URL's host in this
    /// spelling is taken as it is (it resolves to itself); in any other
    /// (`2130706433`, `0x7f.1`, `127.1`) it is resolved, and the addresses
    /// it resolves to are checked.
    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var copy = bytes
        let family = isIPv4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &copy, &text, socklen_t(text.count)) != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// An address range: an address and a prefix length (`10.0.0.0/8`).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    public let prefixLength: Int

    /// `cidr` as `address/length`, or an address alone (all its bits).
    public init?(_ cidr: String) {
        let parts = cidr.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress(String(first)) else { return nil }
        let length = parts.count == 2 ? Int(parts[1]) : address.bytes.count * 8
        guard let length, (0...(address.bytes.count * 8)).contains(length) else { return nil }
        self.address = address
        self.prefixLength = length
    }

    /// Whether `address` (of the same family) is in the range.
    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == self.address.bytes.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(address.bytes, self.address.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            guard a & mask == b & mask else { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(address)/\(prefixLength)" }
}
