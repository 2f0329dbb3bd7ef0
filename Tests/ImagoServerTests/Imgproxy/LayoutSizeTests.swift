import ImagoCodecs
import Testing

@testable import ImagoServer

/// The answer's size for every resizing type, with and without enlarging,
/// extending, the aspect-ratio extension, rotation, padding and a result
/// size limit: the cases of imgproxy's own processing tests (v3.31,
/// `processing/processing_test.go`, over its 200x100 `test2.jpg`), run
/// through the layout here on a 200x100 image.
@Suite("Layout: answer sizes as imgproxy's processing tests give them")
struct LayoutSizeTests {
    /// (options, result size limit or 0 for none, width, height).
    static let cases: [(String, Int, Int, Int)] = [
        ("rt:fit/w:50/h:50", 0, 50, 25),
        ("rt:fit/w:50/h:20", 0, 40, 20),
        ("rt:fit/w:20/h:50", 0, 20, 10),
        ("rt:fit/w:300/h:300", 0, 200, 100),
        ("rt:fit/w:300/h:50", 0, 100, 50),
        ("rt:fit/w:100/h:300", 0, 100, 50),
        ("rt:fit/w:0/h:50", 0, 100, 50),
        ("rt:fit/w:50/h:0", 0, 50, 25),
        ("rt:fit/w:0/h:200", 0, 200, 100),
        ("rt:fit/w:300/h:0", 0, 200, 100),
        ("rt:fit/el:1/w:50/h:50", 0, 50, 25),
        ("rt:fit/el:1/w:50/h:20", 0, 40, 20),
        ("rt:fit/el:1/w:20/h:50", 0, 20, 10),
        ("rt:fit/el:1/w:300/h:300", 0, 300, 150),
        ("rt:fit/el:1/w:300/h:125", 0, 250, 125),
        ("rt:fit/el:1/w:250/h:300", 0, 250, 125),
        ("rt:fit/el:1/w:0/h:50", 0, 100, 50),
        ("rt:fit/el:1/w:50/h:0", 0, 50, 25),
        ("rt:fit/el:1/w:0/h:200", 0, 400, 200),
        ("rt:fit/el:1/w:300/h:0", 0, 300, 150),
        ("rt:fit/ex:1/w:50/h:50", 0, 50, 50),
        ("rt:fit/ex:1/w:50/h:20", 0, 50, 20),
        ("rt:fit/ex:1/w:20/h:50", 0, 20, 50),
        ("rt:fit/ex:1/w:300/h:300", 0, 300, 300),
        ("rt:fit/ex:1/w:300/h:125", 0, 300, 125),
        ("rt:fit/ex:1/w:250/h:300", 0, 250, 300),
        ("rt:fit/ex:1/w:0/h:50", 0, 100, 50),
        ("rt:fit/ex:1/w:50/h:0", 0, 50, 25),
        ("rt:fit/ex:1/w:0/h:200", 0, 200, 200),
        ("rt:fit/ex:1/w:300/h:0", 0, 300, 100),
        ("rt:fit/exar:1/w:50/h:50", 0, 50, 50),
        ("rt:fit/exar:1/w:50/h:20", 0, 50, 20),
        ("rt:fit/exar:1/w:20/h:50", 0, 20, 50),
        ("rt:fit/exar:1/w:300/h:300", 0, 200, 200),
        ("rt:fit/exar:1/w:300/h:125", 0, 240, 100),
        ("rt:fit/exar:1/w:250/h:500", 0, 200, 400),
        ("rt:fit/exar:1/w:0/h:50", 0, 100, 50),
        ("rt:fit/exar:1/w:50/h:0", 0, 50, 25),
        ("rt:fit/exar:1/w:0/h:200", 0, 200, 100),
        ("rt:fit/exar:1/w:300/h:0", 0, 200, 100),
        ("rt:fill/w:50/h:50", 0, 50, 50),
        ("rt:fill/w:50/h:20", 0, 50, 20),
        ("rt:fill/w:20/h:50", 0, 20, 50),
        ("rt:fill/w:300/h:300", 0, 200, 100),
        ("rt:fill/w:300/h:50", 0, 200, 50),
        ("rt:fill/w:100/h:300", 0, 100, 100),
        ("rt:fill/w:0/h:50", 0, 100, 50),
        ("rt:fill/w:50/h:0", 0, 50, 25),
        ("rt:fill/w:0/h:200", 0, 200, 100),
        ("rt:fill/w:300/h:0", 0, 200, 100),
        ("rt:fill/el:1/w:50/h:50", 0, 50, 50),
        ("rt:fill/el:1/w:50/h:20", 0, 50, 20),
        ("rt:fill/el:1/w:20/h:50", 0, 20, 50),
        ("rt:fill/el:1/w:300/h:300", 0, 300, 300),
        ("rt:fill/el:1/w:300/h:125", 0, 300, 125),
        ("rt:fill/el:1/w:250/h:300", 0, 250, 300),
        ("rt:fill/el:1/w:0/h:50", 0, 100, 50),
        ("rt:fill/el:1/w:50/h:0", 0, 50, 25),
        ("rt:fill/el:1/w:0/h:200", 0, 400, 200),
        ("rt:fill/el:1/w:300/h:0", 0, 300, 150),
        ("rt:fill/ex:1/w:50/h:50", 0, 50, 50),
        ("rt:fill/ex:1/w:50/h:20", 0, 50, 20),
        ("rt:fill/ex:1/w:20/h:50", 0, 20, 50),
        ("rt:fill/ex:1/w:300/h:300", 0, 300, 300),
        ("rt:fill/ex:1/w:300/h:125", 0, 300, 125),
        ("rt:fill/ex:1/w:250/h:300", 0, 250, 300),
        ("rt:fill/ex:1/w:300/h:50", 0, 300, 50),
        ("rt:fill/ex:1/w:100/h:300", 0, 100, 300),
        ("rt:fill/ex:1/w:0/h:50", 0, 100, 50),
        ("rt:fill/ex:1/w:50/h:0", 0, 50, 25),
        ("rt:fill/ex:1/w:0/h:200", 0, 200, 200),
        ("rt:fill/ex:1/w:300/h:0", 0, 300, 100),
        ("rt:fill/exar:1/w:50/h:50", 0, 50, 50),
        ("rt:fill/exar:1/w:50/h:20", 0, 50, 20),
        ("rt:fill/exar:1/w:20/h:50", 0, 20, 50),
        ("rt:fill/exar:1/w:300/h:300", 0, 200, 200),
        ("rt:fill/exar:1/w:300/h:125", 0, 240, 100),
        ("rt:fill/exar:1/w:250/h:500", 0, 200, 400),
        ("rt:fill/exar:1/w:300/h:50", 0, 300, 50),
        ("rt:fill/exar:1/w:100/h:300", 0, 100, 300),
        ("rt:fill/exar:1/w:0/h:50", 0, 100, 50),
        ("rt:fill/exar:1/w:50/h:0", 0, 50, 25),
        ("rt:fill/exar:1/w:0/h:200", 0, 200, 100),
        ("rt:fill/exar:1/w:300/h:0", 0, 200, 100),
        ("rt:fill-down/w:50/h:50", 0, 50, 50),
        ("rt:fill-down/w:50/h:20", 0, 50, 20),
        ("rt:fill-down/w:20/h:50", 0, 20, 50),
        ("rt:fill-down/w:300/h:300", 0, 100, 100),
        ("rt:fill-down/w:300/h:125", 0, 200, 83),
        ("rt:fill-down/w:250/h:300", 0, 83, 100),
        ("rt:fill-down/w:0/h:50", 0, 100, 50),
        ("rt:fill-down/w:50/h:0", 0, 50, 25),
        ("rt:fill-down/w:0/h:200", 0, 200, 100),
        ("rt:fill-down/w:300/h:0", 0, 200, 100),
        ("rt:fill-down/el:1/w:50/h:50", 0, 50, 50),
        ("rt:fill-down/el:1/w:50/h:20", 0, 50, 20),
        ("rt:fill-down/el:1/w:20/h:50", 0, 20, 50),
        ("rt:fill-down/el:1/w:300/h:300", 0, 300, 300),
        ("rt:fill-down/el:1/w:300/h:125", 0, 300, 125),
        ("rt:fill-down/el:1/w:250/h:300", 0, 250, 300),
        ("rt:fill-down/el:1/w:0/h:50", 0, 100, 50),
        ("rt:fill-down/el:1/w:50/h:0", 0, 50, 25),
        ("rt:fill-down/el:1/w:0/h:200", 0, 400, 200),
        ("rt:fill-down/el:1/w:300/h:0", 0, 300, 150),
        ("rt:fill-down/ex:1/w:50/h:50", 0, 50, 50),
        ("rt:fill-down/ex:1/w:50/h:20", 0, 50, 20),
        ("rt:fill-down/ex:1/w:20/h:50", 0, 20, 50),
        ("rt:fill-down/ex:1/w:300/h:300", 0, 300, 300),
        ("rt:fill-down/ex:1/w:300/h:125", 0, 300, 125),
        ("rt:fill-down/ex:1/w:250/h:300", 0, 250, 300),
        ("rt:fill-down/ex:1/w:300/h:50", 0, 300, 50),
        ("rt:fill-down/ex:1/w:100/h:300", 0, 100, 300),
        ("rt:fill-down/ex:1/w:0/h:50", 0, 100, 50),
        ("rt:fill-down/ex:1/w:50/h:0", 0, 50, 25),
        ("rt:fill-down/ex:1/w:0/h:200", 0, 200, 200),
        ("rt:fill-down/ex:1/w:300/h:0", 0, 300, 100),
        ("rt:fill-down/exar:1/w:50/h:50", 0, 50, 50),
        ("rt:fill-down/exar:1/w:50/h:20", 0, 50, 20),
        ("rt:fill-down/exar:1/w:20/h:50", 0, 20, 50),
        ("rt:fill-down/exar:1/w:300/h:300", 0, 100, 100),
        ("rt:fill-down/exar:1/w:300/h:125", 0, 200, 83),
        ("rt:fill-down/exar:1/w:250/h:300", 0, 83, 100),
        ("rt:fill-down/exar:1/w:0/h:50", 0, 100, 50),
        ("rt:fill-down/exar:1/w:50/h:0", 0, 50, 25),
        ("rt:fill-down/exar:1/w:0/h:200", 0, 200, 100),
        ("rt:fill-down/exar:1/w:300/h:0", 0, 200, 100),
        ("rt:fit/w:100/h:100", 1000, 100, 50),
        ("rt:fit/w:100/h:100", 50, 50, 25),
        ("rt:fit/w:0/h:0", 50, 50, 25),
        ("rt:fit/w:0/h:100", 100, 100, 50),
        ("rt:fit/w:150/h:0", 50, 50, 25),
        ("rt:fit/w:1000/h:1000", 100, 100, 50),
        ("rt:fit/el:1/w:1000/h:1000", 100, 100, 50),
        ("rt:fit/ex:1/w:1000/h:2000", 100, 50, 100),
        ("rt:fit/exar:1/w:1000/h:2000", 100, 50, 100),
        ("rt:fit/rot:90/w:100/h:150", 100, 50, 100),
        ("rt:fit/rot:90/w:0/h:0", 100, 50, 100),
        ("rt:fill/w:100/h:100", 1000, 100, 100),
        ("rt:fill/w:100/h:100", 50, 50, 50),
        ("rt:fill/w:1000/h:50", 50, 50, 13),
        ("rt:fill/w:100/h:1000", 50, 50, 50),
        ("rt:fill/w:0/h:0", 50, 50, 25),
        ("rt:fill/w:0/h:100", 100, 100, 50),
        ("rt:fill/w:150/h:0", 50, 50, 25),
        ("rt:fill/w:1000/h:1000", 100, 100, 50),
        ("rt:fill/el:1/w:1000/h:1000", 100, 100, 100),
        ("rt:fill/ex:1/w:1000/h:2000", 100, 50, 100),
        ("rt:fill/exar:1/w:1000/h:2000", 100, 50, 100),
        ("rt:fill/rot:90/w:100/h:150", 100, 67, 100),
        ("rt:fill/rot:90/w:0/h:0", 100, 50, 100),
        ("rt:fill-down/w:100/h:100", 1000, 100, 100),
        ("rt:fill-down/w:100/h:100", 50, 50, 50),
        ("rt:fill-down/w:1000/h:50", 50, 50, 3),
        ("rt:fill-down/w:100/h:1000", 50, 5, 50),
        ("rt:fill-down/w:0/h:0", 50, 50, 25),
        ("rt:fill-down/w:0/h:100", 100, 100, 50),
        ("rt:fill-down/w:150/h:0", 50, 50, 25),
        ("rt:fill-down/w:1000/h:1000", 100, 100, 100),
        ("rt:fill-down/el:1/w:1000/h:1000", 100, 100, 100),
        ("rt:fill-down/ex:1/w:1000/h:2000", 100, 50, 100),
        ("rt:fill-down/exar:1/w:1000/h:2000", 100, 50, 100),
        ("rt:fill-down/rot:90/w:1000/h:1500", 100, 67, 100),
        ("rt:fill-down/rot:90/w:0/h:0", 100, 50, 100),
        ("rt:fit/pd:100:200:300:400/w:100/h:100", 200, 200, 129),
        ("rt:fill/pd:100:200:300:400/w:100/h:100", 200, 200, 144),
        ("rt:fill-down/pd:100:200:300:400/w:100/h:100", 200, 200, 144),
        ("rt:fill-down/pd:100:200:300:400/w:1000/h:1000", 200, 200, 144),
    ]

    @Test("each case's size", arguments: cases)
    func size(_ options: String, _ limit: Int, _ width: Int, _ height: Int) throws {
        let image = try #require(Image(width: 200, height: 100, pixelFormat: .rgb8, pixels: [UInt8](repeating: 128, count: 200 * 100 * 3)))
        let parsed = try ProcessingOptions.Parser().options(options.split(separator: "/"))
        let layout = LayoutProcessor(
            options: parsed, sourceSize: nil, orientation: .up, outputIsOpaque: false,
            maximumResultDimension: limit == 0 ? ProcessingOptions.largestSide : limit, watermark: nil)
        let result = try #require(layout.process(image))
        #expect(result.size == ImageSize(width: width, height: height), "\(options) limit \(limit)")
    }

    @Test("the decode's size: the scaled image's, rounded as the plan rounds it, upright; full size where the layout needs it")
    func decodeSize() throws {
        func size(_ options: String, _ source: ImageSize = ImageSize(width: 1024, height: 768), orientation: ImageOrientation = .up) throws
            -> ImageSize?
        {
            let parsed = try ProcessingOptions.Parser().options(options.split(separator: "/"))
            return LayoutProcessor(
                options: parsed, sourceSize: source, orientation: orientation, outputIsOpaque: false, maximumResultDimension: 8_192, watermark: nil
            ).decodeSize
        }
        #expect(try size("w:256") == ImageSize(width: 256, height: 192))
        // A 1/3 scale: 341.3 x 256, so the decode fills 341x256 and the layout has nothing left to resample.
        #expect(try size("rs:fill:256:256") == ImageSize(width: 341, height: 256))
        // Turned a quarter: the box applies to the turned image; the decode is upright.
        #expect(try size("rs:fill:256:100/rot:90") == ImageSize(width: 341, height: 256))
        #expect(try size("rs:fill:256:100/ar:0", ImageSize(width: 768, height: 1024), orientation: .right) == ImageSize(width: 192, height: 256))
        #expect(try size("w:2048") == nil, "never enlarged while decoding")
        #expect(try size("t:10/w:256") == nil, "trim decodes at full size")
        #expect(try size("c:512:384/w:256") == ImageSize(width: 512, height: 384), "a crop's region at the scale it needs")
    }

    /// imgproxy's `calcScale` (v3.31, `processing/prepare.go`): "if
    /// !po.Enlarge && !isVector" limits the scale to 1, so a vector source
    /// reaches the box without `el`.
    @Test("a vector source is enlarged to the box without el, and decoded at that size")
    func vectorSource() throws {
        func layout(_ options: String, vector: Bool) throws -> LayoutProcessor {
            let parsed = try ProcessingOptions.Parser().options(options.split(separator: "/"))
            return LayoutProcessor(
                options: parsed, sourceSize: ImageSize(width: 40, height: 20), orientation: .up, outputIsOpaque: false,
                maximumResultDimension: 8_192, watermark: nil, sourceIsVector: vector)
        }
        let source = try #require(Image(width: 40, height: 20, pixelFormat: .rgb8, pixels: [UInt8](repeating: 9, count: 40 * 20 * 3)))
        for (options, raster, vector) in [
            ("rs:fit:200:200", ImageSize(width: 40, height: 20), ImageSize(width: 200, height: 100)),
            ("rs:fill:100:100", ImageSize(width: 40, height: 20), ImageSize(width: 100, height: 100)),
            ("w:20", ImageSize(width: 20, height: 10), ImageSize(width: 20, height: 10)),
        ] {
            #expect(try layout(options, vector: false).process(source)?.size == raster, "\(options)")
            #expect(try layout(options, vector: true).process(source)?.size == vector, "\(options)")
        }
        #expect(try layout("rs:fit:200:200", vector: false).decodeSize == nil)
        #expect(try layout("rs:fit:200:200", vector: true).decodeSize == ImageSize(width: 200, height: 100))
        #expect(try layout("rs:fill:100:100", vector: true).decodeSize == ImageSize(width: 200, height: 100))
        #expect(try layout("rs:fit:20000:20000", vector: true).decodeSize == ImageSize(width: 8_192, height: 4_096), "the result limit holds")
    }
}
