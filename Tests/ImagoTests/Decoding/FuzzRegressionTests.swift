import Foundation
import Testing

@testable import ImagoCodecs

/// The inputs the fuzzers (`Fuzz/`, `scripts/fuzz.sh`) found crashing a
/// decoder, hanging it or breaking a limit, kept in
/// `Fuzz/Regressions/<format>/`: each must decode, under the fuzzers'
/// limits, to an image within them, or fail with an ``ImageDecodingError``.
/// A crash here takes the whole test run down, which fails it too.
@Suite("Fuzz regressions: inputs that once broke a decoder")
struct FuzzRegressionTests {
    /// The fuzzers' limits (`DecoderFuzzing.options`): some inputs break a
    /// limit only when it is this low.
    static let options = ImageDecodingOptions(maximumPixelCount: 4_000_000, maximumFrameCount: 50)

    /// The decoder for each folder, named as the fuzz targets are.
    static let decoders: [String: any ImageDecoding] = [
        "jpeg": JPEGDecoder(), "png": PNGDecoder(), "webp": WebPDecoder(),
        "gif": GIFDecoder(), "avif": AVIFDecoder(), "heic": HEIFDecoder(), "jxl": JXLDecoder(),
        "tiff": TIFFDecoder(), "bmp": BMPDecoder(), "ico": ICODecoder(), "svg": SVGDecoder(),
    ]

    /// `Fuzz/Regressions`, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Regressions")

    /// The format folders, whatever their names.
    static var folders: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root.appendingPathComponent(name).path, isDirectory: &isDirectory) && isDirectory.boolValue
        }.sorted()
    }

    /// Every input, as `<format>/<file>`.
    static var inputs: [String] {
        folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? [])
                .filter { !$0.hasPrefix(".") }.sorted().map { "\(folder)/\($0)" }
        }
    }

    @Test("the folder is there and holds only formats the fuzzers cover, in small files")
    func layout() throws {
        // Given the folder (it holds a README even without inputs)
        try #require(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("README.md").path), "no \(Self.root.path)")
        // Then every folder names a decoder and every input is small
        for folder in Self.folders {
            #expect(Self.decoders[folder] != nil, "Fuzz/Regressions/\(folder) is not a format: \(Self.decoders.keys.sorted())")
        }
        for input in Self.inputs {
            let size = try FileManager.default.attributesOfItem(atPath: Self.root.appendingPathComponent(input).path)[.size] as? Int
            #expect((size ?? 0) <= 64 * 1024, "\(input) is \(size ?? 0) bytes; keep regression inputs small")
        }
    }

    @Test(
        "decodes to an image within the limits, or fails with an ImageDecodingError",
        .enabled(if: !inputs.isEmpty, "no inputs in Fuzz/Regressions yet"),
        arguments: inputs
    )
    func input(_ path: String) throws {
        // Given an input that once broke its decoder
        let format = String(path.prefix { $0 != "/" })
        let decoder = try #require(Self.decoders[format])
        let data = try Data(contentsOf: Self.root.appendingPathComponent(path))
        // When it is decoded at full size, then at a small target size, as the fuzzers do
        var small = Self.options
        small.targetSize = ImageSize(width: 16, height: 16)
        for options in [Self.options, small] {
            do throws(ImageDecodingError) {
                let image = try decoder.decode(data, options: options)
                // Then the image and its frames stay within the limits
                #expect(image.width * image.height <= options.maximumPixelCount, "\(path): \(image)")
                guard let animation = image.animation else { continue }
                #expect(animation.frameCount <= options.maximumFrameCount, "\(path): \(animation.frameCount) frames")
                let frames = try animation.frames()
                var count = 0
                while let frame = try frames.next(), count < animation.frameCount {
                    count += 1
                    #expect(frame.size == animation.frameSize, "\(path): frame \(count) is \(frame.size)")
                }
            } catch {
                // Then, or the decoder refuses it: the error is typed, so nothing else can come out.
                #expect(!error.description.isEmpty)
            }
        }
    }
}
