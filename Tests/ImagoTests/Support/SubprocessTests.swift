import Foundation
import ImagoSandbox
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Subprocess: children started while many descriptors are open, holding none of them")
struct SubprocessTests {
    @Test("with 1,500 more descriptors open, a child starts, inherits none of them, and its output and exit code come back")
    func manyDescriptors() throws {
        // Not close-on-exec, as a socket or file of another test may not be.
        let count = min(1_500, Int(Self.descriptorLimit) - 200)
        let opened = (0..<count).map { _ in open("/dev/null", O_RDONLY) }
        defer { for descriptor in opened { close(descriptor) } }
        #expect(opened.allSatisfy { $0 >= 0 })

        let (listing, ended) = try Subprocess.run("/bin/ls", arguments: ["/proc/self/fd"])
        #expect(ended == .exited(0))
        // ls's own: its standard streams and the directory it reads.
        let inherited = String(decoding: listing, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        #expect(inherited.count <= 4 && inherited.allSatisfy { $0 <= 3 }, "\(inherited)")
    }

    @Test("standard error apart or merged, an exit code, a signal, a missing executable")
    func outcomes() throws {
        let child = try Subprocess("/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"], errors: .piped)
        #expect(String(decoding: child.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self) == "out\n")
        #expect(String(decoding: child.errors?.readDataToEndOfFile() ?? Data(), as: UTF8.self) == "err\n")
        #expect(child.wait() == .exited(3) && child.wait() == .exited(3))

        let (merged, _) = try Subprocess.run("/bin/sh", arguments: ["-c", "echo out; echo err >&2"])
        #expect(String(decoding: merged, as: UTF8.self) == "out\nerr\n")

        let sleeper = try Subprocess("/bin/sleep", arguments: ["600"], pipesOutput: false)
        sleeper.send(SIGKILL)
        #expect(sleeper.wait() == .signalled(SIGKILL))

        #expect(throws: Subprocess.LaunchError.self) { try Subprocess("/nonexistent/tool", arguments: []) }
    }

    static var descriptorLimit: rlim_t {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return limit.rlim_cur
    }
}
