import Foundation
import ImagoCodecFixtures
import Testing

@testable import ImagoCodecs

/// What ``ImageMetadata/init(reading:)`` finds in TIFF and BMP files,
/// which keep their metadata in the file's own structure rather than in
/// blocks: a TIFF's tags and directories, a BMP V5 header's profile.
@Suite("TIFF and BMP metadata: ICC profiles, XMP, Photoshop resources, EXIF made of the file's tags")
struct TIFFAndBMPMetadataTests {
    static let image = FormatFixtures.quadrants(width: 16, height: 8)

    @Test("a TIFF written by libtiff: its ICC profile and XMP tags, without decoding; the pixels left as stored")
    func libtiffTags() throws {
        var page = FormatFixtures.TIFFPage(Self.image)
        page.iccProfile = MetadataFixtures.iccProfile(size: 3_000)
        page.xmp = MetadataFixtures.xmp(creator: "Ann Example")
        for bigEndian in [false, true] {
            let data = try FormatFixtures.tiff([page], bigEndian: bigEndian)
            let metadata = ImageMetadata(reading: data)
            #expect(metadata.iccProfile == page.iccProfile, "big-endian: \(bigEndian)")
            #expect(metadata.xmp == page.xmp)
            #expect(metadata.exif == nil)
            #expect(try TIFFDecoder().decode(data, options: ImageDecodingOptions()) == Self.image)
        }
        #expect(ImageMetadata(reading: try FormatFixtures.tiff([FormatFixtures.TIFFPage(Self.image)])).isEmpty)
    }

    @Test("a TIFF's descriptive tags and EXIF directory become an EXIF block, in the file's byte order, without what would point nowhere")
    func exifBlock() throws {
        for bigEndian in [false, true] {
            let data = FormatFixtures.handMadeTIFF(
                width: 2, height: 1, pixels: [1, 2, 3, 4, 5, 6],
                fields: [
                    .short(EXIF.orientationTag, 6), .ascii(EXIF.artistTag, "Ann Example"), .ascii(EXIF.copyrightTag, "(c) 2026 Ann Example"),
                    .ascii(0x010F, "Example Camera"), .undefined(0x8649, MetadataFixtures.photoshopResources(iptc: [(2, 116, "(c) Ann")])),
                    .ascii(0x0131, "a scanner"),
                    // Not descriptive: left out of the block.
                    .ascii(0x010D, "document name"),
                ],
                exifFields: [
                    .ascii(0x9003, "2026:11:26 10:00:00"), .short(0xA001, 1), .undefined(0x927C, Data(repeating: 7, count: 40)),
                    .long(0xA005, 12),
                ],
                bigEndian: bigEndian
            )
            let metadata = ImageMetadata(reading: data)
            #expect(metadata.iptc == MetadataFixtures.photoshopResources(iptc: [(2, 116, "(c) Ann")]))
            let block = try #require(metadata.exif, "big-endian: \(bigEndian)")
            try block.withUnsafeBytes { bytes in
                let exif = try #require(EXIF(bytes))
                #expect(exif.isBigEndian == bigEndian)
                #expect(exif.orientation == 6)
                let entries = exif.entries
                #expect(entries.map(\.tag) == [0x010F, 0x0112, 0x0131, EXIF.artistTag, EXIF.copyrightTag, EXIF.exifDirectoryTag])
                #expect(entries.first { $0.tag == EXIF.artistTag }.flatMap(exif.ascii).map { Array($0) } == MetadataFixtures.ascii("Ann Example"))
                let pointer = try #require(entries.first { $0.tag == EXIF.exifDirectoryTag }.flatMap(exif.integer))
                let subdirectory = exif.entries(at: pointer)
                // The maker note and the interoperability pointer are dropped.
                #expect(subdirectory.map(\.tag) == [0x9003, 0xA001])
                #expect(subdirectory.first.flatMap(exif.ascii).map { Array($0) } == MetadataFixtures.ascii("2026:11:26 10:00:00"))
                #expect(subdirectory.last.flatMap(exif.integer) == 1)
            }
            // The orientation tag was applied by the decoder: the upright copy says so.
            #expect(metadata.upright().exif.map { $0.withUnsafeBytes { EXIF($0)?.orientation } } == 1)
            #expect(
                metadata.keepingCopyrightOnly().exif.flatMap { $0.withUnsafeBytes { EXIF($0)?.entries.map(\.tag) } } == [
                    EXIF.artistTag, EXIF.copyrightTag,
                ])
        }
    }

    @Test("TIFF blocks over the size limit, or whose values run past the end, are not read")
    func damagedTIFFBlocks() throws {
        let large = FormatFixtures.handMadeTIFF(
            width: 1, height: 1, pixels: [1, 2, 3], fields: [.undefined(0x8773, Data(count: ImageMetadata.maximumBlockSize + 2))])
        #expect(ImageMetadata(reading: large).iccProfile == nil)
        let manyLarge = FormatFixtures.handMadeTIFF(
            width: 1, height: 1, pixels: [1, 2, 3], fields: [.ascii(EXIF.artistTag, "A")],
            exifFields: [.undefined(0x9286, Data(count: ImageMetadata.maximumBlockSize))])
        #expect(ImageMetadata(reading: manyLarge).exif == nil)
        var pastEnd = FormatFixtures.handMadeTIFF(width: 1, height: 1, pixels: [1, 2, 3], fields: [.undefined(0x8773, Data(count: 100))])
        pastEnd.removeLast(60)
        #expect(ImageMetadata(reading: pastEnd).iccProfile == nil)
    }

    @Test("a BMP V5 header's embedded ICC profile is read; none from other headers")
    func bmpProfile() throws {
        let profile = MetadataFixtures.iccProfile(size: 500)
        let header = FormatFixtures.BitmapHeader(size: 124, width: 2, height: 1, bitCount: 24, profile: profile)
        let data = FormatFixtures.bmp(header, pixelData: FormatFixtures.bitmapRows([[0xFF_0000, 0x00FF00]], bitCount: 24))
        #expect(ImageMetadata(reading: data) == ImageMetadata(iccProfile: profile))
        #expect(try BMPDecoder().decode(data, options: ImageDecodingOptions()).pixels == [255, 0, 0, 0, 255, 0])
        #expect(ImageMetadata(reading: FormatFixtures.bmp(Self.image)).isEmpty)
        // A profile said to be past the end of the file.
        var pastEnd = data
        pastEnd.removeLast(100)
        #expect(ImageMetadata(reading: pastEnd).isEmpty)
    }
}
