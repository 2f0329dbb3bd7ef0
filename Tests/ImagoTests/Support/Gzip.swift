import Foundation

/// `data` compressed by the system's gzip (part of every Debian system), for
/// Content-Encoding tests: the tests make their compressed bodies rather than
/// carry binary files.
func gzipped(_ data: Data) throws -> Data {
    let folder = TemporaryDirectory("imago-gzip")
    let input = folder.appending("body")
    try data.write(to: URL(fileURLWithPath: input))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["gzip", "-c", "-9", input]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let compressed = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    return compressed
}
