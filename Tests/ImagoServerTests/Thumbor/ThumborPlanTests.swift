import Foundation
import ImagoCodecs
import Testing

@testable import ImagoServer

/// thumbor's geometry, checked against what thumbor 7.8 answered for the
/// same URLs on a 1024x768 and a 768x1024 image (and a 200x150 one).
@Suite("thumbor layout: sizes, crops and focal points as thumbor 7.8 computes them")
struct ThumborPlanTests {
    static let land = ImageSize(width: 1024, height: 768)
    static let port = ImageSize(width: 768, height: 1024)
    static let small = ImageSize(width: 200, height: 150)

    static func plan(_ url: String, _ size: ImageSize) throws -> ThumborPlan {
        let path = try ThumborPath(Substring(url))
        let filters = try ThumborFilter.list(path.filters)
        let regions = filters.compactMap { filter -> ThumborPath.Crop? in
            if case .focal(let region) = filter { return region }
            return nil
        }
        return ThumborPlan(size: size, loadedSize: size, path: path, focalRegions: regions, noUpscale: filters.contains(.noUpscale))
    }

    /// thumbor's answers: the URL, its size for the 1024x768 image, and for the 768x1024 one.
    static let sizes: [(String, String, String)] = [
        ("/unsafe/land.jpg", "1024x768", "768x1024"), ("/unsafe/300x200/land.jpg", "300x200", "300x200"),
        ("/unsafe/300x0/land.jpg", "300x225", "300x400"), ("/unsafe/0x300/land.jpg", "400x300", "225x300"),
        ("/unsafe/300x/land.jpg", "300x225", "300x400"), ("/unsafe/x300/land.jpg", "400x300", "225x300"),
        ("/unsafe/x/land.jpg", "1024x768", "768x1024"), ("/unsafe/0x0/land.jpg", "1024x768", "768x1024"),
        ("/unsafe/origx300/land.jpg", "1024x300", "768x300"), ("/unsafe/300xorig/land.jpg", "300x768", "300x1024"),
        ("/unsafe/origxorig/land.jpg", "1024x768", "768x1024"), ("/unsafe/-300x200/land.jpg", "300x200", "300x200"),
        ("/unsafe/300x-200/land.jpg", "300x200", "300x200"), ("/unsafe/-300x-200/land.jpg", "300x200", "300x200"),
        ("/unsafe/-0x0/land.jpg", "1024x768", "768x1024"), ("/unsafe/-x-/land.jpg", "1024x768", "768x1024"),
        ("/unsafe/2000x1500/land.jpg", "2000x1500", "2000x1500"), ("/unsafe/2000x0/land.jpg", "2000x1500", "2000x2667"),
        ("/unsafe/400x301/land.jpg", "400x301", "400x301"), ("/unsafe/401x300/land.jpg", "401x300", "401x300"),
        ("/unsafe/1x0/land.jpg", "1x1", "1x1"), ("/unsafe/10000x1/land.jpg", "10000x1", "10000x1"),
        ("/unsafe/300x200/left/top/land.jpg", "300x200", "300x200"), ("/unsafe/300x200/right/bottom/land.jpg", "300x200", "300x200"),
        ("/unsafe/300x200/smart/land.jpg", "300x200", "300x200"), ("/unsafe/fit-in/300x300/land.jpg", "300x225", "225x300"),
        ("/unsafe/fit-in/300x0/land.jpg", "300x225", "300x400"), ("/unsafe/fit-in/0x300/land.jpg", "400x300", "225x300"),
        ("/unsafe/fit-in/2000x2000/land.jpg", "1024x768", "768x1024"), ("/unsafe/fit-in/2000x500/land.jpg", "667x500", "375x500"),
        ("/unsafe/fit-in/land.jpg", "1024x768", "768x1024"), ("/unsafe/fit-in/origx300/land.jpg", "400x300", "225x300"),
        ("/unsafe/fit-in/-300x300/land.jpg", "300x225", "225x300"), ("/unsafe/adaptive-fit-in/300x400/land.jpg", "400x300", "300x400"),
        ("/unsafe/adaptive-fit-in/400x300/land.jpg", "400x300", "300x400"), ("/unsafe/full-fit-in/300x300/land.jpg", "400x300", "300x400"),
        ("/unsafe/full-fit-in/300x100/land.jpg", "300x225", "300x400"), ("/unsafe/full-fit-in/2000x2000/land.jpg", "2667x2000", "2000x2667"),
        ("/unsafe/adaptive-full-fit-in/300x100/land.jpg", "300x225", "225x300"), ("/unsafe/100x100:500x400/land.jpg", "400x300", "400x300"),
        ("/unsafe/100x100:500x400/200x0/land.jpg", "200x150", "200x150"), ("/unsafe/100x100:500x400/200x200/land.jpg", "200x200", "200x200"),
        ("/unsafe/100x100:500x400/fit-in/200x200/land.jpg", "200x150", "200x150"), ("/unsafe/500x400:100x100/land.jpg", "1024x768", "768x1024"),
        ("/unsafe/700x700:2000x2000/land.jpg", "324x68", "68x324"), ("/unsafe/0x0:0x0/land.jpg", "1024x768", "768x1024"),
        ("/unsafe/2000x1500/filters:no_upscale()/land.jpg", "1024x768", "768x1024"),
        ("/unsafe/300x200/filters:focal(0x600:100x700)/land.jpg", "300x200", "300x200"),
        ("/unsafe/100x300/filters:focal(0x600:100x700)/land.jpg", "100x300", "100x300"), ("/unsafe/6x0/land.jpg", "6x4", "6x8"),
        ("/unsafe/fit-in/6x6/land.jpg", "6x5", "5x6"), ("/unsafe/fit-in/6x0/land.jpg", "5x4", "6x8"),
    ]

    @Test("every size thumbor answered for the two images")
    func sizes() throws {
        var mismatches: [String] = []
        for (url, land, port) in Self.sizes {
            for (size, expected) in [(Self.land, land), (Self.port, port)] {
                let got = try Self.plan(url, size).size.description
                if got != expected { mismatches.append("\(url) on \(size): \(got), thumbor \(expected)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    @Test("a 200x150 image: fit-in never enlarges, crop mode does, no_upscale clamps each side")
    func smallImage() throws {
        for (url, expected) in [
            ("/unsafe/fit-in/300x300/small.jpg", "200x150"), ("/unsafe/300x300/filters:no_upscale()/small.jpg", "200x150"),
            ("/unsafe/300x100/filters:no_upscale()/small.jpg", "200x100"), ("/unsafe/300x300/small.jpg", "300x300"),
        ] {
            #expect(try Self.plan(url, Self.small).size.description == expected, "\(url)")
        }
        // The box fit-in did not resize to stays what fill() and upscale() take.
        let kept = try Self.plan("/unsafe/fit-in/300x300/small.jpg", Self.small)
        #expect(kept.operations.isEmpty && kept.requestedWidth == 300 && kept.requestedHeight == 300)
    }

    @Test("the operations /meta reports: crops and resizes with thumbor's coordinates")
    func operations() throws {
        #expect(
            try Self.plan("/unsafe/300x200/land.jpg", Self.land).operations == [
                .crop(left: 0, top: 42, right: 1024, bottom: 725), .resize(width: 300, height: 200),
            ])
        #expect(
            try Self.plan("/unsafe/100x100:500x400/fit-in/200x200/land.jpg", Self.land).operations == [
                .crop(left: 100, top: 100, right: 500, bottom: 400), .resize(width: 200, height: 150),
            ])
        let focal = try Self.plan("/unsafe/200x300:800x700/100x100/filters:focal(300x400:400x500)/land.jpg", Self.land)
        #expect(
            focal.operations == [
                .crop(left: 200, top: 300, right: 800, bottom: 700), .crop(left: 0, top: 0, right: 400, bottom: 400),
                .resize(width: 100, height: 100),
            ])
        #expect(focal.focalPoints == [ThumborPlan.FocalPoint(x: 150, y: 150, weight: 10_000, width: 100, height: 100, isExplicit: true)])
        #expect(
            try Self.plan("/unsafe/-100x-300/land.jpg", Self.land).operations == [
                .crop(left: 384, top: 0, right: 640, bottom: 768), .resize(width: 100, height: 300),
            ])
        #expect(
            try Self.plan("/unsafe/300x100/filters:focal(0x600:100x700)/land.jpg", Self.land).operations.first
                == .crop(left: 0, top: 427, right: 1024, bottom: 768))
        #expect(
            try Self.plan("/unsafe/100x300/right/filters:focal(0x600:100x700)/land.jpg", Self.land).operations.first
                == .crop(left: 0, top: 0, right: 256, bottom: 768))
        // The ratios agree to two decimals: no crop, the resize stretches a little.
        #expect(try Self.plan("/unsafe/400x301/land.jpg", Self.land).operations == [.resize(width: 400, height: 301)])
    }

    @Test("where thumbor answers 500, Imago answers the image's own size")
    func originalBesideZero() throws {
        for url in ["/unsafe/origx0/land.jpg", "/unsafe/origx/land.jpg", "/unsafe/xorig/land.jpg", "/unsafe/fit-in/origx0/land.jpg"] {
            #expect(try Self.plan(url, Self.land).size == Self.land, "\(url)")
        }
        #expect(try Self.plan("/unsafe/origx300/filters:no_upscale()/land.jpg", Self.land).size.description == "1024x300")
    }

    @Test("trim first: the manual crop is in the loaded image's coordinates, moved by the trim")
    func afterTrim() throws {
        let path = try ThumborPath("/unsafe/trim/200x100:600x400/border.png")
        let plan = ThumborPlan(size: ImageSize(width: 800, height: 600), trimOffset: (100, 50), loadedSize: Self.land, path: path)
        #expect(plan.operations == [.crop(left: 100, top: 50, right: 500, bottom: 350)])
        #expect(plan.size.description == "400x300")
    }
}
