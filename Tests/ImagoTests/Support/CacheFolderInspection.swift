import Foundation
import Testing

@testable import Imago
@testable import ImagoCaching

/// What a disk cache folder holds, read straight from the file system, to
/// check the cache's own accounting against.
struct CacheFolderInspection {
    var entryFiles: [String] = []
    var entryBytes = 0
    var temporaryFiles: [String] = []

    init(path: String) {
        let manager = FileManager.default
        for shard in (try? manager.contentsOfDirectory(atPath: path)) ?? [] where shard.count == 2 {
            let folder = path + "/" + shard
            for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] {
                let file = folder + "/" + name
                if name.hasPrefix(".tmp-") {
                    temporaryFiles.append(file)
                } else if name.count == 64 {
                    entryFiles.append(file)
                    entryBytes += ((try? manager.attributesOfItem(atPath: file)[.size]) as? Int) ?? 0
                }
            }
        }
    }
}

/// Deterministic test bytes.
func testData(count: Int, seed: UInt64) -> Data {
    var state = seed &+ 0x9E37_79B9_7F4A_7C15
    return Data(
        (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        })
}

/// Expects the cache's accounting to match the files on disk, no temporary
/// file to be left, and the index to be sound.
func expectConsistent(_ cache: DiskCache, sourceLocation: SourceLocation = #_sourceLocation) {
    let disk = CacheFolderInspection(path: cache.path)
    #expect(cache.totalSize == disk.entryBytes, "total size", sourceLocation: sourceLocation)
    #expect(cache.count == disk.entryFiles.count, "count", sourceLocation: sourceLocation)
    #expect(disk.temporaryFiles.isEmpty, "temporary files left", sourceLocation: sourceLocation)
    #expect(cache.state.withLock { $0.index.checkInvariants() }.isEmpty, sourceLocation: sourceLocation)
}
