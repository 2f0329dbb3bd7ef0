import Foundation

/// The on-disk format of one disk cache entry.
///
/// ```
/// offset size  field
///      0    4  magic "IMGC"
///      4    2  format version (1)
///      6    2  reserved (0)
///      8    4  key length K
///     12    4  metadata length M
///     16    8  body length B
///     24    8  checksum: XXH64 over bytes 0..<24, then the key, metadata and body
///     32    K  key (UTF-8)
///   32+K    M  metadata (owned by the caller)
/// 32+K+M    B  body
/// ```
/// All integers are little-endian. A file whose size is not exactly
/// 32 + K + M + B, or whose checksum does not match, is torn or corrupt.
enum EntryFile {
    static let headerSize = 32
    static let version: UInt16 = 1
    private static let magic: [UInt8] = Array("IMGC".utf8)
    /// The first read takes this much, which covers the header, key and
    /// metadata of nearly every entry (and all of a small one).
    private static let firstReadSize = 4096

    /// What reading an entry file found.
    enum ReadResult {
        case entry(CachedData)
        /// The file is whole but belongs to another key (a SHA-256 collision).
        case otherKey
        /// The file is torn, truncated or corrupt; the reason is for the log.
        case corrupt(String)
    }

    /// The size of the file for an entry.
    static func fileSize(keyCount: Int, metadataCount: Int, bodyCount: Int) -> Int {
        headerSize + keyCount + metadataCount + bodyCount
    }

    /// Header, key and metadata: everything that precedes the body.
    static func prefix(key: [UInt8], metadata: Data, body: Data) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(headerSize + key.count + metadata.count)
        bytes.append(contentsOf: magic)
        bytes.appendLittleEndian(version)
        bytes.appendLittleEndian(UInt16(0))
        bytes.appendLittleEndian(UInt32(key.count))
        bytes.appendLittleEndian(UInt32(metadata.count))
        bytes.appendLittleEndian(UInt64(body.count))
        let checksum = checksum(header: bytes, key: key, metadata: metadata, body: body)
        bytes.appendLittleEndian(checksum)
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: metadata)
        return bytes
    }

    /// Whose entry a reader expects: a known key, or (when walking the files
    /// without keys) any key whose hash is the file's name.
    enum Owner {
        case key([UInt8])
        case hash(EntryHash)

        func matches(_ key: ArraySlice<UInt8>) -> Bool {
            switch self {
            case .key(let expected): key.elementsEqual(expected)
            case .hash(let expected): EntryHash(key: String(decoding: key, as: UTF8.self)) == expected
            }
        }
    }

    /// Reads and verifies the entry file open at `fd`.
    static func read(_ fd: Int32, path: String, owner: Owner) throws(SystemCallError) -> ReadResult {
        let fileSize = try POSIXFile.size(fd, path: path)
        guard fileSize >= headerSize else { return .corrupt("file of \(fileSize) bytes is shorter than a header") }
        var prefix = [UInt8](repeating: 0, count: min(fileSize, firstReadSize))
        let got = try prefix.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemCallError) in try POSIXFile.read(fd, into: buffer, at: 0, path: path) }
        }.get()
        guard got == prefix.count else { return .corrupt("file shrank while being read") }
        guard prefix.starts(with: magic) else { return .corrupt("bad magic number") }
        let version: UInt16 = load(prefix, at: 4)
        guard version == Self.version else { return .corrupt("unknown format version \(version)") }
        let keyCount = Int(load(prefix, at: 8) as UInt32)
        let metadataCount = Int(load(prefix, at: 12) as UInt32)
        let bodyCount64: UInt64 = load(prefix, at: 16)
        let stored: UInt64 = load(prefix, at: 24)
        // Lengths come from the file: a forged one must not overflow the sum.
        let (total, overflow) = UInt64(headerSize + keyCount + metadataCount).addingReportingOverflow(bodyCount64)
        guard !overflow, total == UInt64(fileSize) else {
            return .corrupt("lengths in the header do not add up to the file size \(fileSize)")
        }
        let bodyCount = Int(bodyCount64)
        let bodyStart = headerSize + keyCount + metadataCount
        if bodyStart > prefix.count {
            // A large key or metadata blob: read the rest of the prefix.
            let more = bodyStart - prefix.count
            prefix.append(contentsOf: repeatElement(0, count: more))
            let read = try prefix.withUnsafeMutableBytes { buffer in
                let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[(bodyStart - more)...])
                return Result { () throws(SystemCallError) in try POSIXFile.read(fd, into: rest, at: bodyStart - more, path: path) }
            }.get()
            guard read == more else { return .corrupt("file shrank while being read") }
        }
        let key = prefix[headerSize..<(headerSize + keyCount)]
        let metadata = Data(prefix[(headerSize + keyCount)..<bodyStart])
        // Not `Data(count:)`: it zeroes the body only for the read to
        // overwrite it, on every disk hit.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bodyCount), alignment: 16)
        let inPrefix = min(bodyCount, prefix.count - bodyStart)
        prefix.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[bodyStart..<(bodyStart + inPrefix)]))
        }
        let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[inPrefix..<bodyCount])
        let read: Int
        do {
            read = try POSIXFile.read(fd, into: rest, at: bodyStart + inPrefix, path: path)
        } catch {
            buffer.deallocate()
            throw error
        }
        guard read == rest.count else {
            buffer.deallocate()
            return .corrupt("file shrank while being read")
        }
        let body = Data(bytesNoCopy: buffer.baseAddress!, count: bodyCount, deallocator: .custom { pointer, _ in pointer.deallocate() })
        let computed = checksum(header: prefix[0..<24], key: key, metadata: metadata, body: body)
        guard computed == stored else { return .corrupt("checksum mismatch") }
        guard owner.matches(key) else { return .otherKey }
        return .entry(CachedData(data: body, metadata: metadata))
    }

    private static func checksum(header: some ContiguousBytes, key: some ContiguousBytes, metadata: Data, body: Data) -> UInt64 {
        var h = header.withUnsafeBytes { Checksum.hash(UnsafeRawBufferPointer(rebasing: $0.prefix(24))) }
        h = Checksum.hash(key, seed: h)
        h = Checksum.hash(metadata, seed: h)
        return Checksum.hash(body, seed: h)
    }

    private static func load<T: FixedWidthInteger>(_ bytes: [UInt8], at offset: Int) -> T {
        bytes.withUnsafeBytes { $0.loadLittleEndian(at: offset) }
    }
}
