import ImagoCodecs
import ImagoSandbox
import Testing

@testable import ImagoServer

/// What an attacker could put in a URL: seeded random option segments,
/// from imgproxy's names and argument pieces that are empty, huge,
/// negative, fractional, NaN or not numbers. None may trap; whatever
/// parses lays out any source within the result limit.
@Suite("Layout: random options never trap and stay within the result limit")
struct LayoutRandomTests {
    static let names = [
        "rs", "s", "rt", "w", "h", "mw", "mh", "z", "dpr", "el", "ex", "exar", "g", "c", "t", "pd", "ar", "rot", "fl", "bg", "bl", "sh",
        "pix", "q", "fq", "mb", "f", "sm", "kcr", "scp", "eth", "skp", "raw", "cb", "exp", "fn", "att", "pr", "imago_gray", "imago_radius",
        "bogus",
    ]
    static let pieces = [
        "", "0", "1", "2", "3", "7", "10", "45", "90", "-90", "270", "100", "255", "256", "1000", "99999", "100000", "100001",
        "9223372036854775807", "-1", "0.5", "0.25", "1.5", "-0.5", "1e9", "nan", "inf", "-inf", "fill", "fit", "fill-down", "force",
        "auto", "ce", "no", "so", "ea", "we", "noea", "nowe", "soea", "sowe", "sm", "fp", "re", "t", "true", "false", "fff", "ff00ff",
        "zz", "webp", "png", "jpg", "avif", "gif", "x",
    ]

    @Test("5,000 random option lists over random sources: no trap, answers within the limit")
    func randomOptions() throws {
        var generator = SeededGenerator(seed: 26)
        let parser = ProcessingOptions.Parser(allowsSourceLimits: true)
        var laidOut = 0
        for _ in 0..<5_000 {
            let segments = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                ([Self.names.randomElement(using: &generator)!]
                    + (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                        Self.pieces.randomElement(using: &generator)!
                    }).joined(separator: ":")
            }
            guard var options = try? parser.options(segments) else { continue }
            // The watermark needs an image of the operator's; without one the service refuses wm.
            options.watermark.isEnabled = false
            let limit = Int.random(in: 16...512, using: &generator)
            let source = ImageSize(width: Int.random(in: 1...120, using: &generator), height: Int.random(in: 1...120, using: &generator))
            let plan = LayoutPlan(sourceSize: source, options: options, maximumResultDimension: limit)
            #expect(plan.scaleX > 0 && plan.scaleY > 0 && plan.scaleX.isFinite && plan.scaleY.isFinite, "\(segments)")
            let image = try #require(
                Image(
                    width: source.width, height: source.height, pixelFormat: .rgb8,
                    pixels: (0..<source.width * source.height * 3).map { _ in UInt8.random(in: 0...255, using: &generator) }))
            let layout = LayoutProcessor(
                options: options, sourceSize: nil, orientation: .up, outputIsOpaque: Bool.random(using: &generator),
                maximumResultDimension: limit, watermark: nil)
            guard let result = layout.process(image) else {
                Issue.record("no image for \(segments) over \(source)")
                continue
            }
            laidOut += 1
            // Padding is added after the limit scales the rest down, at the scaled dpr; a small margin covers rounding.
            #expect(max(result.width, result.height) <= limit + 2, "\(segments) over \(source) with limit \(limit): \(result.size)")
        }
        #expect(laidOut > 250, "\(laidOut) of 5,000 lists parsed and laid out")
    }
}
