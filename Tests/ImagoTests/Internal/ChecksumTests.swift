import Foundation
import Testing

@testable import Imago
@testable import ImagoCaching

@Suite("Checksum (XXH64)")
struct ChecksumTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var input: [UInt8]
        var seed: UInt64
        var expected: UInt64
        var testDescription: String { "\(input.count) bytes, seed \(seed)" }
    }

    static let ramp: [UInt8] = (0..<768).map { UInt8($0 % 256) }
    static let x31 = [UInt8](repeating: UInt8(ascii: "x"), count: 31)
    static let y37 = [UInt8](repeating: UInt8(ascii: "y"), count: 37)

    // Reference values computed with the `xxhash` Python package (xxh64).
    static let vectors: [Vector] = [
        Vector(input: [], seed: 0, expected: 0xEF46_DB37_51D8_E999),
        Vector(input: Array("a".utf8), seed: 0, expected: 0xD24E_C4F1_A98C_6E5B),
        Vector(input: Array("abc".utf8), seed: 0, expected: 0x44BC_2CF5_AD77_0999),
        Vector(input: ramp, seed: 0, expected: 0x8E03_C838_C596_036F),
        Vector(input: x31, seed: 0, expected: 0x60DD_0D01_083B_99F0),
        Vector(input: y37, seed: 0, expected: 0x1965_09C2_CA03_F094),
        Vector(input: [], seed: 12345, expected: 0x9558_4AF7_701F_808D),
        Vector(input: Array("a".utf8), seed: 12345, expected: 0x747B_8605_23D6_9AB6),
        Vector(input: ramp, seed: 12345, expected: 0x6ECA_C135_863F_12B2),
        Vector(input: y37, seed: 12345, expected: 0x1E93_48A1_D0F4_E137),
    ]

    @Test("matches the reference implementation", arguments: vectors)
    func referenceVectors(vector: Vector) {
        #expect(Checksum.hash(vector.input, seed: vector.seed) == vector.expected)
    }

    @Test("a single flipped bit changes the checksum")
    func bitFlip() {
        var bytes = Array(testData(count: 20_000, seed: 7))
        let original = Checksum.hash(bytes)
        bytes[12_345] ^= 0x10
        #expect(Checksum.hash(bytes) != original)
    }
}
