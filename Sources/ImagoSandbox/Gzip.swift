import Foundation

/// `data` compressed by the system's gzip (part of every Debian system), for
/// Content-Encoding tests: the tests make their compressed bodies rather than
/// carry binary files.
public func gzipped(_ data: Data) throws -> Data {
    let folder = TemporaryDirectory("imago-gzip")
    let input = folder.appending("body")
    try data.write(to: URL(fileURLWithPath: input))
    let gzip = try Subprocess("/usr/bin/env", arguments: ["gzip", "-c", "-9", input])
    let compressed = gzip.output?.readDataToEndOfFile() ?? Data()
    guard gzip.wait() == .exited(0) else { throw CocoaError(.fileWriteUnknown) }
    return compressed
}

/// `data` in the zlib format of HTTP's "deflate" coding (RFC 1950), built
/// from stored (uncompressed) deflate blocks: enough to test the decoding path.
public func zlibStored(_ data: Data) -> Data {
    var output = Data([0x78, 0x01])
    let bytes = [UInt8](data)
    var offset = 0
    repeat {
        let count = min(65_535, bytes.count - offset)
        let isLast: UInt8 = offset + count == bytes.count ? 1 : 0
        output.append(isLast)
        output.append(contentsOf: [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
        output.append(contentsOf: bytes[offset..<offset + count])
        offset += count
    } while offset < bytes.count
    var a: UInt32 = 1
    var b: UInt32 = 0
    for byte in bytes {
        a = (a + UInt32(byte)) % 65_521
        b = (b + a) % 65_521
    }
    let adler = b << 16 | a
    output.append(contentsOf: [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)])
    return output
}
