import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCaching

/// Runs a system tool (mount, chattr) and fails unless it exits with 0.
func runTool(_ tool: String, _ arguments: [String]) throws {
    try CommandLineTool(path: tool).run(arguments)
}

/// A small tmpfs mounted for one test, to produce real ENOSPC and EROFS errors.
/// Mounting needs root (CAP_SYS_ADMIN); CI runs as root.
final class TmpfsMount {
    let path: String
    private let parent = TemporaryDirectory("imago-tmpfs")

    static let isSupported: Bool = {
        guard let probe = try? TmpfsMount(sizeKiB: 64) else { return false }
        probe.unmount()
        return true
    }()

    init(sizeKiB: Int) throws {
        path = parent.appending("mnt")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=\(sizeKiB)k", "tmpfs", path])
    }

    func remountReadOnly() throws {
        try runTool("/bin/mount", ["-o", "remount,ro", path])
    }

    func unmount() {
        try? runTool("/bin/umount", ["-l", path])
    }

    deinit { unmount() }
}

@Suite(
    "DiskCache on a full or read-only file system",
    .enabled(if: TmpfsMount.isSupported, "skipped: mounting a tmpfs needs root (CAP_SYS_ADMIN)")
)
struct DiskCacheFileSystemFailureTests {
    @Test("a full disk is a typed error; what was stored stays readable and nothing half-written remains")
    func diskFull() throws {
        // Given a cache whose size limit is larger than its 256 KiB file system
        let mount = try TmpfsMount(sizeKiB: 256)
        let cache = try DiskCache(path: mount.path + "/cache", configuration: .init(sizeLimit: 10 << 20, maintenanceInterval: nil))
        // When entries are stored until the disk is full
        var stored: [Int] = []
        var failure: DiskCacheError?
        for i in 0..<100 {
            do {
                try cache.storeData(testData(count: 20_000, seed: UInt64(i)), metadata: Data(), forKey: "k\(i)")
                stored.append(i)
            } catch {
                failure = error
                break
            }
        }
        // Then the failure says so, with the key and the stage
        let error = try #require(failure)
        #expect(error.code == .noSpace)
        #expect(error.operation == .store)
        #expect(error.key == "k\(stored.count)")
        #expect("\(error)".contains("no space"))
        #expect(stored.count >= 5)
        // And every stored entry is still whole; no temporary file is left
        for i in stored { #expect(cache.cachedData(forKey: "k\(i)")?.data == testData(count: 20_000, seed: UInt64(i))) }
        let disk = CacheFolderInspection(path: cache.path)
        #expect(disk.temporaryFiles.isEmpty)
        #expect(cache.totalSize == disk.entryBytes)
        // And once space is freed, stores work again
        try cache.trim(toSize: cache.totalSize / 2)
        try cache.storeData(Data("room".utf8), metadata: Data(), forKey: "after")
        #expect(cache.cachedData(forKey: "after")?.data == Data("room".utf8))
        cache.close()
    }

    @Test("a snapshot that does not fit is an error, and the old snapshot survives")
    func snapshotOnFullDisk() throws {
        let mount = try TmpfsMount(sizeKiB: 256)
        let cache = try DiskCache(path: mount.path + "/cache", configuration: .init(sizeLimit: 10 << 20, maintenanceInterval: nil))
        try cache.storeData(Data("a".utf8), metadata: Data(), forKey: "a")
        try cache.flush()
        let saved = try Data(contentsOf: URL(fileURLWithPath: mount.path + "/cache/index"))
        // Fill the disk with tiny entries (each needs one 4 KiB block).
        var i = 0
        while (try? cache.storeData(Data("x".utf8), metadata: Data(), forKey: "fill\(i)")) != nil { i += 1 }
        #expect(throws: DiskCacheError.self) { try cache.flush() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: mount.path + "/cache/index")) == saved)
        #expect(CacheFolderInspection(path: cache.path).temporaryFiles.isEmpty)
        cache.close()
    }

    @Test("on a read-only file system, reads keep working and writes fail with a typed error")
    func readOnly() throws {
        // Given a cache with entries on a file system that then turns read-only
        let mount = try TmpfsMount(sizeKiB: 1024)
        let path = mount.path + "/cache"
        do {
            let cache = try DiskCache(path: path, configuration: .init(maintenanceInterval: nil))
            try cache.storeData(Data("kept".utf8), metadata: Data(), forKey: "a")
            cache.close()
        }
        try mount.remountReadOnly()
        // When a cache opens it
        let cache = try DiskCache(path: path, configuration: .init(maintenanceInterval: nil))
        // Then loads work and writes report the read-only file system
        #expect(cache.cachedData(forKey: "a")?.data == Data("kept".utf8))
        #expect {
            try cache.storeData(Data("new".utf8), metadata: Data(), forKey: "b")
        } throws: { ($0 as? DiskCacheError)?.code == .readOnly }
        #expect {
            try cache.removeData(forKey: "a")
        } throws: { ($0 as? DiskCacheError)?.code == .readOnly }
        #expect(cache.cachedData(forKey: "a")?.data == Data("kept".utf8))
        cache.close()  // the snapshot cannot be written: logged, not fatal
    }
}

/// Marks a folder immutable (`chattr +i`), which refuses changes with EPERM
/// even to root, for a real permission error in tests that run as root.
final class ImmutableFolder {
    let path: String

    static let isSupported: Bool = {
        let probe = TemporaryDirectory("imago-immutable")
        guard let folder = try? ImmutableFolder(probe.path) else { return false }
        let refused = !FileManager.default.createFile(atPath: probe.appending("x"), contents: Data())
        folder.release()
        return refused
    }()

    init(_ path: String) throws {
        self.path = path
        try runTool("/usr/bin/chattr", ["+i", path])
    }

    func release() {
        try? runTool("/usr/bin/chattr", ["-i", path])
    }

    deinit { release() }
}

@Suite(
    "DiskCache without permission",
    .enabled(if: ImmutableFolder.isSupported, "skipped: chattr +i is not available on this file system")
)
struct DiskCachePermissionTests {
    @Test("a folder the process may not change gives permissionDenied; reads keep working")
    func permissionDenied() throws {
        // Given a cache whose entry's sub-folder the process may not change
        let folder = TemporaryDirectory()
        let cache = try DiskCache(path: folder.path, configuration: .init(maintenanceInterval: nil))
        try cache.storeData(Data("kept".utf8), metadata: Data(), forKey: "a")
        let shard = folder.path + "/" + EntryHash.shardName(EntryHash(key: "a").shard)
        let immutable = try ImmutableFolder(shard)
        defer { immutable.release() }
        // When the entry is replaced or removed
        // Then each fails with a typed error naming the key, and the old entry is intact
        #expect {
            try cache.storeData(Data("new".utf8), metadata: Data(), forKey: "a")
        } throws: { error in
            let error = error as? DiskCacheError
            return error?.code == .permissionDenied && error?.key == "a" && error?.operation == .store
        }
        #expect {
            try cache.removeData(forKey: "a")
        } throws: { ($0 as? DiskCacheError)?.code == .permissionDenied }
        #expect(cache.cachedData(forKey: "a")?.data == Data("kept".utf8))
        immutable.release()
        cache.close()
    }
}
