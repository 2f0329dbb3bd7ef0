import CHeif
import Foundation
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoCodecs

/// An HEIC deeper than 8 bits is converted at 16 bits, before libheif
/// would reduce it to 8, as AVIF is.
@Suite struct HEICDeepColorTests {
    @Test func tenBitHEICIsConvertedBeforeItIsReducedTo8Bits() throws {
        // Given a 10-bit HEIC labelled Display P3 by its nclx box
        let folder = TemporaryDirectory("imago-heic-10")
        let image = ColorFixtures.photo(width: 64, height: 48)
        let data = try FormatFixtures.heic(image, directory: URL(fileURLWithPath: folder.path), nclxPrimaries: 12, depth: 10)
        // When decoded, and decoded as stored
        let decoded = try HEIFDecoder().decode(data, options: .init())
        let stored = try HEIFDecoder().decode(data, options: .init(convertsToSRGB: false))
        // Then it is lcms's conversion of libheif's 10-bit samples, not of the 8 bits it reduces them to
        let space = DeclaredColorSpace.cicp(primaries: 12, transfer: 13)
        let exact = try ColorFixtures.convertedAt16Bits(try Self.rgb16(data), width: stored.width, from: space)
        #expect(ColorFixtures.largestDifference(decoded, exact) == 0)
        #expect(ColorFixtures.largestDifference(stored.convertedToSRGB(from: space), exact) >= 2)
        #expect(ColorFixtures.largestDifference(stored, image) <= 12, "the fixture's 10 bits hold the photo")
    }

    /// An opaque HEIC's pixels as libheif gives them past 8 bits, scaled to 16.
    static func rgb16(_ data: Data) throws -> [UInt16] {
        guard let context = heif_context_alloc() else { throw CommandLineTool.Failure(description: "libheif") }
        defer { heif_context_free(context) }
        var handle: OpaquePointer?
        var decoded: OpaquePointer?
        defer {
            heif_image_release(decoded)
            heif_image_handle_release(handle)
        }
        let read = data.withUnsafeBytes { heif_context_read_from_memory(context, $0.baseAddress, $0.count, nil) }
        guard read.code == heif_error_Ok, heif_context_get_primary_image_handle(context, &handle).code == heif_error_Ok,
            heif_decode_image(handle, &decoded, heif_colorspace_RGB, heif_chroma_interleaved_RRGGBB_LE, nil).code == heif_error_Ok
        else { throw CommandLineTool.Failure(description: "libheif cannot decode the fixture") }
        let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
        let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
        let largest = Double((1 << Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved))) - 1)
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride) else {
            throw CommandLineTool.Failure(description: "no plane")
        }
        return (0..<height).flatMap { y in
            (0..<(width * 3)).map { index in
                let value = Int(plane[y * Int(stride) + 2 * index]) | Int(plane[y * Int(stride) + 2 * index + 1]) << 8
                return UInt16((Double(value) * 65_535 / largest).rounded())
            }
        }
    }
}
