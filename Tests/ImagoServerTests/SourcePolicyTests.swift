import Foundation
import Testing

@testable import ImagoServer

@Suite("Source policy: schemes, prefixes, and every refused address class")
struct SourcePolicyTests {
    @Test("only absolute http and https URLs with a host; prefixes where set")
    func urls() throws {
        let open = SourcePolicy()
        for good in ["http://example.com/a.jpg", "https://example.com:8443/a.jpg?x=1", "HTTPS://EXAMPLE.COM/A.JPG"] {
            _ = try open.check(url: good)
        }
        for bad in [
            "file:///etc/passwd", "ftp://example.com/a", "gopher://example.com/", "data:image/png;base64,AAAA", "", "/a.jpg", "a.jpg",
            "http:///a.jpg", "javascript:alert(1)",
        ] {
            #expect(throws: SourceRefusal.self, "\(bad)") { try open.check(url: bad) }
        }
        let listed = SourcePolicy(allowedPrefixes: ["https://images.example.com/"])
        _ = try listed.check(url: "https://images.example.com/a.jpg")
        for outside in [
            "https://images.example.com.evil.net/a.jpg", "http://images.example.com/a.jpg", "https://evil.net/https://images.example.com/",
        ] {
            let refusal = #expect(throws: SourceRefusal.self) { try listed.check(url: outside) }
            guard case .notAllowed = refusal else {
                Issue.record("\(outside): \(String(describing: refusal))")
                continue
            }
        }
    }

    @Test(
        "refused address classes, v4 and v6, and v4 wrapped in v6",
        arguments: [
            "0.0.0.0", "0.1.2.3", "127.0.0.1", "127.255.255.254", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
            "100.64.0.1", "100.127.255.255", "169.254.169.254", "224.0.0.1", "239.255.255.250", "255.255.255.255", "240.0.0.1",
            "::", "::1", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "::127.0.0.1", "64:ff9b::808:808", "64:ff9b:1::1", "2002:7f00:1::",
            "2001:0:4136:e378::1", "fc00::1", "fd12:3456::1", "fe80::1", "fec0::1", "ff02::1",
        ])
    func refused(address: String) throws {
        let policy = SourcePolicy()
        let parsed = try #require(IPAddress(address))
        let refusal = try #require(policy.refusal(for: [parsed], host: "h"))
        guard case .refusedAddress(let reason) = refusal else {
            Issue.record("\(refusal)")
            return
        }
        #expect(reason.contains(parsed.description))
    }

    @Test("public addresses pass; one refused address among several refuses the host")
    func allowed() throws {
        let policy = SourcePolicy()
        let publicOnes = ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "2001:4860:4860::8888"].compactMap(IPAddress.init)
        #expect(publicOnes.count == 6)
        #expect(policy.refusal(for: publicOnes, host: "h") == nil)
        #expect(policy.refusal(for: publicOnes + [IPAddress("127.0.0.1")!], host: "h") != nil)
        #expect(policy.refusal(for: [], host: "h") == .unresolvable("h does not resolve"))
    }

    @Test("an opened network opens exactly that range")
    func openedNetwork() throws {
        let policy = SourcePolicy(allowedNetworks: [try #require(IPNetwork("127.0.0.2/32"))])
        #expect(policy.refusal(for: [IPAddress("127.0.0.2")!], host: "h") == nil)
        for other in ["127.0.0.1", "127.0.0.3", "::1", "::ffff:127.0.0.2", "10.0.0.2"] {
            #expect(policy.refusal(for: [IPAddress(other)!], host: "h") != nil, "\(other)")
        }
        #expect(IPNetwork("10.0.0.0/33") == nil && IPNetwork("nonsense/8") == nil && IPNetwork("::/129") == nil)
        #expect(IPNetwork("10.1.0.0/16")!.contains(IPAddress("10.1.255.1")!) && !IPNetwork("10.1.0.0/16")!.contains(IPAddress("10.2.0.1")!))
    }
}
