import Foundation
import ImagoSandbox
import Testing

@testable import Imago
@testable import ImagoCodecs

@Suite("EXIF orientation: read from JPEGs, applied while decoding, robust to damaged segments")
struct ImageOrientationTests {
    /// `jpeg` with an APP1 Exif segment declaring `orientation` right after SOI.
    static func withOrientation(_ jpeg: Data, _ orientation: Int, bigEndian: Bool = true) -> Data {
        func bytes(_ value: Int, _ size: Int) -> [UInt8] {
            let littleEndian = (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            return bigEndian ? littleEndian.reversed() : littleEndian
        }
        let tiff =
            (bigEndian ? Array("MM".utf8) : Array("II".utf8)) + bytes(42, 2) + bytes(8, 4)
            + bytes(1, 2) + bytes(0x0112, 2) + bytes(3, 2) + bytes(1, 4) + bytes(orientation, 2) + [0, 0]
            + bytes(0, 4)
        let segment = Array("Exif\0\0".utf8) + tiff
        let length = segment.count + 2
        return jpeg.prefix(2) + Data([0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + segment) + jpeg.dropFirst(2)
    }

    @Test("all eight orientations are read and applied; sideways ones swap width and height", arguments: 1...8)
    func orientations(_ value: Int) throws {
        let plain = try JPEGEncoder(quality: 95).encode(FormatFixtures.quadrants(width: 64, height: 48))
        let stored = try JPEGDecoder().decode(plain, options: ImageDecodingOptions())
        for bigEndian in [true, false] {
            let tagged = Self.withOrientation(plain, value, bigEndian: bigEndian)
            let orientation = try #require(ImageOrientation(rawValue: value))
            #expect(ImageOrientation(jpeg: tagged) == orientation)
            let upright = try JPEGDecoder().decode(tagged, options: ImageDecodingOptions())
            #expect(upright.size == (value >= 5 ? ImageSize(width: 48, height: 64) : ImageSize(width: 64, height: 48)))
            #expect(upright == orientation.apply(to: stored))
        }
    }

    @Test("the transforms move the corners where EXIF says")
    func corners() throws {
        // Red top-left, green top-right, blue bottom-left, white bottom-right.
        let image = FormatFixtures.quadrants(width: 4, height: 2)
        func corners(_ image: Image) -> [[UInt8]] {
            [(0, 0), (image.width - 1, 0), (0, image.height - 1), (image.width - 1, image.height - 1)]
                .map { Array(FormatFixtures.rgba(image, x: $0.0, y: $0.1).prefix(3)) }
        }
        let (red, green, blue, white): ([UInt8], [UInt8], [UInt8], [UInt8]) = ([255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255])
        let expected: [ImageOrientation: [[UInt8]]] = [
            .up: [red, green, blue, white],
            .upMirrored: [green, red, white, blue],
            .down: [white, blue, green, red],
            .downMirrored: [blue, white, red, green],
            .leftMirrored: [red, blue, green, white],
            .right: [blue, red, white, green],
            .rightMirrored: [white, green, blue, red],
            .left: [green, white, red, blue],
        ]
        for (orientation, cornerColors) in expected {
            #expect(corners(orientation.apply(to: image)) == cornerColors, "\(orientation)")
        }
    }

    @Test("a target size applies to the upright image, and the DCT scale is chosen on the stored axes")
    func targetSize() throws {
        let plain = try JPEGEncoder(quality: 90).encode(FormatFixtures.quadrants(width: 800, height: 400))
        let tagged = Self.withOrientation(plain, ImageOrientation.right.rawValue)
        let options = ImageDecodingOptions(targetSize: ImageSize(width: 50, height: 200), contentMode: .fill)
        // Upright 400x800 fills 50x200 at scale 1/4: the decoder may not go below 1/4 on the stored axes.
        let decoded = try JPEGDecoder().decode(tagged, options: options)
        #expect(decoded.size == ImageSize(width: 100, height: 200))
        let scaled = try ImagePipeline.decode(tagged, options: options, decoders: [JPEGDecoder()])
        #expect(scaled.size == ImageSize(width: 100, height: 200))
        #expect(FormatFixtures.rgba(scaled, x: 10, y: 10) != FormatFixtures.rgba(scaled, x: 90, y: 10))
    }

    @Test("missing, cut and damaged Exif segments read as upright; a damaged JPEG that decodes is turned as its segment reads")
    func damagedSegments() throws {
        let plain = try JPEGEncoder().encode(FormatFixtures.quadrants(width: 32, height: 16))
        let stored = try JPEGDecoder().decode(plain, options: ImageDecodingOptions())
        #expect(ImageOrientation(jpeg: plain) == .up)
        #expect(ImageOrientation(jpeg: Self.withOrientation(plain, 9)) == .up, "out of range")
        let tagged = Self.withOrientation(plain, 6)
        // The segment is read only once all of it is there: SOI, marker, then its length.
        let segmentEnd = 4 + (Int(tagged[4]) << 8 | Int(tagged[5]))
        for length in 0..<60 {
            #expect(ImageOrientation(jpeg: tagged.prefix(length)) == (length >= segmentEnd ? .right : .up), "\(length) bytes")
        }
        var generator = SeededGenerator(seed: 3)
        var seen: Set<ImageOrientation> = []
        for _ in 0..<2_000 {
            var damaged = tagged
            let index = Int.random(in: 2..<segmentEnd, using: &generator)
            damaged[index] = UInt8.random(in: 0...255, using: &generator)
            let orientation = ImageOrientation(jpeg: damaged)
            guard let image = try? JPEGDecoder().decode(damaged, options: ImageDecodingOptions()) else { continue }
            seen.insert(orientation)
            #expect(image == orientation.apply(to: stored), "byte \(index) damaged, read as \(orientation)")
        }
        // Upright, the segment's own, and one a damaged value gave.
        #expect(seen.count >= 3, "decoded JPEGs read as \(seen)")
    }
}
