import Foundation
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoCodecs

/// EXIF, XMP, IPTC and ICC profiles read from encoded bytes and written by
/// the encoders; copyright-only and upright copies; damaged blocks.
@Suite("Image metadata: read without decoding, written by the encoders, filtered")
struct ImageMetadataTests {
    static let image = FormatFixtures.quadrants(width: 64, height: 48)
    static let fields = [0x010F: "Example Camera", EXIF.artistTag: "Ann Example", EXIF.copyrightTag: "(c) 2026 Ann Example"]
    static let iptc = MetadataFixtures.photoshopResources(iptc: [
        (1, 90, "\u{1B}%G"), (2, 25, "harbour"), (2, 80, "Ann Example"), (2, 116, "(c) 2026 Ann Example"),
    ])

    /// Everything, with an ICC profile that takes three APP2 segments in a JPEG.
    static let full = ImageMetadata(
        exif: MetadataFixtures.exif(orientation: 6, fields: fields), xmp: MetadataFixtures.xmp(creator: "Ann Example"), iptc: iptc,
        iccProfile: MetadataFixtures.iccProfile(size: 150_000)
    )

    @Test("each encoder writes what its format holds, and the reader reads it back as written")
    func roundTrip() throws {
        let jpeg = try JPEGEncoder(quality: 90, metadata: Self.full).encode(Self.image)
        #expect(ImageMetadata(reading: jpeg) == Self.full)
        // The file still decodes, turned as its EXIF says.
        #expect(ImageOrientation(jpeg: jpeg) == .right)
        #expect(try JPEGDecoder().decode(jpeg, options: ImageDecodingOptions()).size == Self.image.size.transposed)

        var withoutIPTC = Self.full
        withoutIPTC.iptc = nil
        let encoders: [any ImageEncoding] = [PNGEncoder(metadata: Self.full), WebPEncoder(metadata: Self.full), AVIFEncoder(metadata: Self.full)]
        for encoder in encoders {
            let bytes = try encoder.encode(Self.image)
            #expect(ImageMetadata(reading: bytes) == withoutIPTC, "\(encoder.format)")
        }
        let webp = try WebPEncoder(metadata: Self.full).encode(Self.image)
        #expect(try WebPDecoder().decode(webp, options: ImageDecodingOptions()).size == Self.image.size.transposed, "the EXIF turns it")
        #expect(try PNGDecoder().decode(try PNGEncoder(metadata: Self.full).encode(Self.image), options: ImageDecodingOptions()) == Self.image)
    }

    @Test("without metadata the encoders write none, and files without any read as empty")
    func empty() throws {
        for encoder in [JPEGEncoder(), PNGEncoder(), WebPEncoder(), AVIFEncoder()] as [any ImageEncoding] {
            #expect(ImageMetadata(reading: try encoder.encode(Self.image)).isEmpty, "\(encoder.format)")
        }
        #expect(ImageMetadata(reading: Data("not an image".utf8)).isEmpty)
    }

    @Test("HEIC: the Exif and XMP items and the colour profile are read")
    func heic() throws {
        let directory = TemporaryDirectory()
        let folder = URL(fileURLWithPath: directory.path)
        let heic = try FormatFixtures.heic(
            Self.image, directory: folder, exif: Self.full.exif, xmp: Self.full.xmp, iccProfile: MetadataFixtures.iccProfile(size: 3_000)
        )
        #expect(
            ImageMetadata(reading: heic)
                == ImageMetadata(exif: Self.full.exif, xmp: Self.full.xmp, iccProfile: MetadataFixtures.iccProfile(size: 3_000)))
    }

    @Test("copyright only: EXIF Artist and Copyright in a new block, IPTC By-line, Credit and Copyright Notice, no XMP")
    func copyrightOnly() throws {
        for bigEndian in [true, false] {
            var metadata = Self.full
            metadata.exif = MetadataFixtures.exif(orientation: 6, fields: Self.fields, bigEndian: bigEndian)
            let kept = metadata.keepingCopyrightOnly()
            let expected = [EXIF.artistTag: "Ann Example", EXIF.copyrightTag: "(c) 2026 Ann Example"]
            #expect(kept.exif == MetadataFixtures.exif(fields: expected, bigEndian: false))
            #expect(kept.xmp == nil && kept.iccProfile == Self.full.iccProfile)
            #expect(
                kept.iptc
                    == MetadataFixtures.photoshopResources(iptc: [(1, 90, "\u{1B}%G"), (2, 80, "Ann Example"), (2, 116, "(c) 2026 Ann Example")])
                    .suffix(from: 30), "the resolution resource is dropped")
        }
        let none = ImageMetadata(
            exif: MetadataFixtures.exif(orientation: 3, fields: [0x010F: "Example Camera"]),
            iptc: MetadataFixtures.photoshopResources(iptc: [(2, 25, "harbour")])
        )
        #expect(none.keepingCopyrightOnly().isEmpty)
        // A short value sits in the entry itself.
        let short = ImageMetadata(exif: MetadataFixtures.exif(fields: [EXIF.artistTag: "Al"], bigEndian: false))
        #expect(short.keepingCopyrightOnly().exif == short.exif)
    }

    @Test("upright sets the orientation tag to 1 in either byte order and changes nothing else")
    func upright() throws {
        for bigEndian in [true, false] {
            let turned = ImageMetadata(exif: MetadataFixtures.exif(orientation: 8, fields: Self.fields, bigEndian: bigEndian))
            #expect(turned.upright().exif == MetadataFixtures.exif(orientation: 1, fields: Self.fields, bigEndian: bigEndian))
        }
        let untagged = ImageMetadata(exif: MetadataFixtures.exif(fields: Self.fields), xmp: Self.full.xmp)
        #expect(untagged.upright() == untagged)
    }

    @Test("damaged files: every truncation and byte flip reads without trapping; a profile missing a segment is dropped")
    func damaged() throws {
        let jpeg = try JPEGEncoder(quality: 90, metadata: Self.full).encode(FormatFixtures.quadrants(width: 8, height: 8))
        let webp = try WebPEncoder(metadata: Self.full).encode(FormatFixtures.quadrants(width: 8, height: 8))
        var generator = SeededGenerator(seed: 26)
        for file in [jpeg, webp] {
            for length in stride(from: 0, to: file.count, by: 97) {
                let metadata = ImageMetadata(reading: file.prefix(length))
                _ = (metadata.keepingCopyrightOnly(), metadata.upright())
            }
            for _ in 0..<300 {
                var flipped = file
                // Flips land in the metadata, which comes first in both files.
                let index = Int.random(in: 0..<min(file.count, 200_000), using: &generator)
                flipped[index] ^= UInt8.random(in: 1...255, using: &generator)
                let metadata = ImageMetadata(reading: flipped)
                _ = (metadata.keepingCopyrightOnly(), metadata.upright())
            }
        }
        // Offsets pointing past the end of the block.
        var exif = [UInt8](MetadataFixtures.exif(orientation: 6, fields: Self.fields))
        exif[4...7] = [0xFF, 0xFF, 0xFF, 0xF0]
        #expect(ImageMetadata(exif: Data(exif)).keepingCopyrightOnly().exif == nil)
        #expect(ImageMetadata(exif: Data(exif)).upright().exif == Data(exif))
        // Remove the second of the three ICC segments.
        var withoutSecond = Data()
        var removed = false
        jpeg.withUnsafeBytes { bytes in
            var offset = 2
            withoutSecond.append(contentsOf: [0xFF, 0xD8])
            JPEGSegments.forEach(in: bytes) { marker, payload in
                let whole = Data(bytes[offset..<(offset + 4 + payload.count)])
                offset += whole.count
                if marker == 0xE2, !removed, payload.count > 13, payload[12] == 2 { removed = true } else { withoutSecond.append(whole) }
                return true
            }
            withoutSecond.append(Data(bytes[offset...]))
        }
        #expect(removed)
        let read = ImageMetadata(reading: withoutSecond)
        #expect(read.iccProfile == nil && read.exif == Self.full.exif)
    }

    @Test("blocks over the size limit are not read")
    func oversized() throws {
        let large = ImageMetadata(xmp: Data(count: ImageMetadata.maximumBlockSize + 1), iccProfile: MetadataFixtures.iccProfile(size: 2_000))
        let webp = try WebPEncoder(metadata: large).encode(Self.image)
        #expect(ImageMetadata(reading: webp) == ImageMetadata(iccProfile: large.iccProfile))
        // JPEG has no room for an XMP packet over 64 KiB: it is left out, the rest written.
        let jpeg = try JPEGEncoder(metadata: ImageMetadata(exif: Self.full.exif, xmp: Data(count: 70_000))).encode(Self.image)
        #expect(ImageMetadata(reading: jpeg) == ImageMetadata(exif: Self.full.exif))
    }

    @Test("eth: a HEIC's embedded thumbnail is decoded instead of the image when asked; without one, the image")
    func embeddedThumbnail() throws {
        let directory = TemporaryDirectory()
        let folder = URL(fileURLWithPath: directory.path)
        let image = FormatFixtures.quadrants(width: 256, height: 192)
        let withThumbnail = try FormatFixtures.heic(image, directory: folder, thumbnailBox: 64)
        let plain = try FormatFixtures.heic(image, directory: folder)
        let thumbnail = try HEIFDecoder().decode(withThumbnail, options: ImageDecodingOptions(prefersEmbeddedThumbnail: true))
        #expect(thumbnail.size == ImageSize(width: 64, height: 48))
        #expect(FormatFixtures.showsQuadrants(thumbnail))
        #expect(try HEIFDecoder().decode(withThumbnail, options: ImageDecodingOptions()).size == image.size)
        #expect(try HEIFDecoder().decode(plain, options: ImageDecodingOptions(prefersEmbeddedThumbnail: true)).size == image.size)
    }
}
