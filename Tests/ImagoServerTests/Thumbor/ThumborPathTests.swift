import Foundation
import ImagoSandbox
import Testing

@testable import ImagoServer

/// thumbor's URL grammar, filter syntax and signing, with thumbor 7.8's
/// own answers (observed on it) as the expected values.
@Suite("thumbor URLs: the path grammar, filters and signatures as thumbor reads them")
struct ThumborPathTests {
    typealias Path = ThumborPath

    @Test("every part in its place: signature, meta, trim, crop, fit-in, size and flips, alignment, smart, filters, image")
    func everyPart() throws {
        let path = try Path(
            "/uAP72uBWQyXNyIqdqNsLU_-_uz0=/meta/trim:bottom-right:10/100x100:500x400/adaptive-full-fit-in/-300x-200/right/bottom/smart/filters:grayscale():quality(50)/land.jpg"
        )
        #expect(path.signature == "uAP72uBWQyXNyIqdqNsLU_-_uz0=")
        #expect(path.signedText.hasPrefix("meta/trim:bottom-right:10/"))
        #expect(path.isMeta && path.isSmart)
        #expect(path.trim == Path.Trim(fromBottomRight: true, tolerance: 10))
        #expect(path.crop == Path.Crop(left: 100, top: 100, right: 500, bottom: 400))
        #expect(path.fitIn == Path.FitIn(isAdaptive: true, isFull: true))
        #expect(path.width == .pixels(300) && path.height == .pixels(200) && path.flipsHorizontally && path.flipsVertically)
        #expect(path.horizontalAlign == .right && path.verticalAlign == .bottom)
        #expect(path.filters == "grayscale():quality(50)")
        #expect(path.image == "land.jpg")
    }

    @Test(
        "sizes: 0 and missing keep the aspect ratio, orig, flips alone",
        arguments: [
            ("300x200", Path.Side.pixels(300), Path.Side.pixels(200), false, false),
            ("300x", .pixels(300), .pixels(0), false, false), ("x300", .pixels(0), .pixels(300), false, false),
            ("x", .pixels(0), .pixels(0), false, false), ("origx300", .original, .pixels(300), false, false),
            ("-origx-orig", .original, .original, true, true), ("-0x0", .pixels(0), .pixels(0), true, false),
            ("-x-", .pixels(0), .pixels(0), true, true),
        ])
    func sizes(segment: String, width: Path.Side, height: Path.Side, flipsH: Bool, flipsV: Bool) throws {
        let path = try Path(Substring("/unsafe/\(segment)/land.jpg"))
        #expect(path.signature == nil)
        #expect(path.width == width && path.height == height && path.flipsHorizontally == flipsH && path.flipsVertically == flipsV)
        #expect(path.image == "land.jpg")
    }

    @Test(
        "a part out of order or malformed is the start of the image, as in thumbor (whose source then is not found)",
        arguments: [
            ("/unsafe/full-adaptive-fit-in/300x100/land.jpg", "full-adaptive-fit-in/300x100/land.jpg"),
            ("/unsafe/filters:quality(50)/300x200/land.jpg", "300x200/land.jpg"),
            ("/unsafe/300x200/top/left/land.jpg", "left/land.jpg"), ("/unsafe/smart/300x200/land.jpg", "300x200/land.jpg"),
            ("/unsafe/300x200/fit-in/land.jpg", "fit-in/land.jpg"), ("/unsafe/META/300x200/land.jpg", "META/300x200/land.jpg"),
            ("/unsafe/trim:left/land.jpg", "trim:left/land.jpg"), ("/unsafe/trim:top-left:10:5/land.jpg", "trim:top-left:10:5/land.jpg"),
            ("/unsafe/10x10:20x20:30x30/land.jpg", "10x10:20x20:30x30/land.jpg"), ("/unsafe/-10x10:20x20/land.jpg", "-10x10:20x20/land.jpg"),
            ("/unsafe/300X200/land.jpg", "300X200/land.jpg"), ("/unsafe/300x200.5/land.jpg", "300x200.5/land.jpg"),
            ("/unsafe/+300x200/land.jpg", "+300x200/land.jpg"), ("/unsafe/300x200/filters:grayscale/land.jpg", "filters:grayscale/land.jpg"),
            ("/unsafe/300x200/filters:fill(red)/filters:quality(50)/land.jpg", "filters:quality(50)/land.jpg"),
            ("/unsafe/300x200", "300x200"), ("/unsafe/300x200/", "300x200/"), ("/unsafe//300x200/land.jpg", "/300x200/land.jpg"),
            ("/unsafe/300x200/land.jpg/extra", "land.jpg/extra"), ("/unsafe/filters%3Aquality(50)/land.jpg", "filters%3Aquality(50)/land.jpg"),
        ])
    func outOfOrder(path: String, image: String) throws {
        #expect(try Path(Substring(path)).image == Substring(image))
    }

    @Test("debug/ comes before meta/, as in thumbor")
    func debug() throws {
        let path = try Path("/unsafe/debug/meta/300x200/land.jpg")
        #expect(path.isDebug && path.isMeta && path.width == .pixels(300) && path.image == "land.jpg")
        #expect(try Path("/unsafe/meta/debug/300x200/land.jpg").image == "debug/300x200/land.jpg")
    }

    @Test("trim: a lone number is thumbor's corner (bottom-right) with no tolerance")
    func trim() throws {
        #expect(try Path("/unsafe/trim/a.png").trim == Path.Trim())
        #expect(try Path("/unsafe/trim:50/a.png").trim == Path.Trim(fromBottomRight: true, tolerance: 0))
        #expect(try Path("/unsafe/trim:top-left:7/a.png").trim == Path.Trim(fromBottomRight: false, tolerance: 7))
    }

    @Test("filters end at the first ')/' that leaves an image; their text is decoded")
    func filterText() throws {
        let path = try Path("/unsafe/filters:watermark(http://a/b(1).png,10,10,0):quality(%2050%20)/land.jpg")
        #expect(path.filters == "watermark(http://a/b(1).png,10,10,0):quality( 50 )")
        #expect(path.image == "land.jpg")
        let cut = try Path("/unsafe/filters:watermark(http://a/b(1)/c.png,0,0,0)/land.jpg")
        #expect(cut.filters == "watermark(http://a/b(1)")
        #expect(cut.image == "c.png,0,0,0)/land.jpg")
        let spaced = try Path("/unsafe/filters:quality(%2050%20)/land.jpg")
        #expect(try ThumborFilter.list(spaced.filters) == [.quality(50)])
        #expect(try Path("/unsafe/filters:()/land.jpg").filters == "()")
        #expect(try ThumborFilter.list("()") == [])
    }

    @Test("no signature and no unsafe: not a thumbor URL", arguments: ["/img.jpg", "/unsafe", "/unsafe/", "/", ""])
    func unsigned(path: String) {
        #expect(throws: Path.Malformed.self) { try Path(Substring(path)) }
    }

    @Test("signatures: HMAC-SHA1 of the path as sent, URL-safe base64 with padding (thumbor's own values)")
    func signing() throws {
        let signing = ThumborSigning(key: "MY_SECURE_KEY")
        for (signature, text) in [
            ("JDzXdpAw-aFkHGp6_k93opMOxxE=", "300x200/land.jpg"), ("kcZgJZt3qGI-0DkTK_r4tVf3NjE=", "fit-in/300x300/filters:quality(50)/land.jpg"),
            ("7agXF4q0-V8LkSs1TSRopvezOTU=", "meta/300x200/land.jpg"), ("BcrG-rM2U3qSIr-3sO7mguVHoqc=", "300x200/sub%20dir/a%20b.jpg"),
            ("uAP72uBWQyXNyIqdqNsLU_-_uz0=", "trim/100x100:500x400/-300x-200/right/bottom/smart/filters:grayscale()/land.jpg"),
        ] {
            #expect(signing.signature(for: text) == signature)
            let path = try Path(Substring("/\(signature)/\(text)"))
            #expect(path.signedText == Substring(text))
            #expect(signing.isValid(signature: try #require(path.signature), for: path.signedText))
        }
        // The padding percent-encoded is the same signature; without it, or over other text, it is not.
        #expect(try Path("/JDzXdpAw-aFkHGp6_k93opMOxxE%3D/300x200/land.jpg").signature == "JDzXdpAw-aFkHGp6_k93opMOxxE=")
        #expect(!signing.isValid(signature: "JDzXdpAw-aFkHGp6_k93opMOxxE", for: "300x200/land.jpg"))
        #expect(!signing.isValid(signature: "JDzXdpAw-aFkHGp6_k93opMOxxE=", for: "/300x200/land.jpg"))
        #expect(!signing.isValid(signature: "BcrG-rM2U3qSIr-3sO7mguVHoqc=", for: "300x200/sub dir/a b.jpg"))
        #expect(!ThumborSigning(key: "another").isValid(signature: "JDzXdpAw-aFkHGp6_k93opMOxxE=", for: "300x200/land.jpg"))
    }

    @Test("filters with their arguments, in order; repeated ones kept")
    func filters() throws {
        let list = try ThumborFilter.list(
            "quality(10):quality(90):format(webp):format(bmp):blur(5):blur(200,1.5):sharpen(2,1.0,true):grayscale():"
                + "round_corner(20|40,0,0,0,1):round_corner(20,255,255,255):fill(red):fill(00ff00,true):fill(auto):background_color(blue):"
                + "rotate(-90):upscale():no_upscale():proportion(0.5):strip_icc():strip_exif():max_bytes(3000):focal(0x600:100x700):"
                + "brightness(-40):contrast(40):rgb(20,-20,0):noise(40):noise(10,7):watermark(wm.png,-10p,center,50):"
                + "watermark('a,b.png',repeat,-0,0,20,none):max_age(60):autojpg()")
        #expect(
            list == [
                .quality(10), .quality(90), .format(.webp), .format(nil), .blur(radius: 5, sigma: 5), .blur(radius: 150, sigma: 1.5),
                .sharpen(amount: 2, radius: 1, luminanceOnly: true), .grayscale,
                .roundCorner(horizontal: 20, vertical: 40, red: 0, green: 0, blue: 0, transparent: true),
                .roundCorner(horizontal: 20, vertical: 20, red: 255, green: 255, blue: 255, transparent: false),
                .fill(.color("red"), compositesTransparent: false), .fill(.color("00ff00"), compositesTransparent: true),
                .fill(.auto, compositesTransparent: false), .backgroundColor(.color("blue")), .rotate(-90), .upscale, .noUpscale,
                .proportion(0.5), .stripICC, .stripEXIF, .maxBytes(3000), .focal(ThumborPath.Crop(left: 0, top: 600, right: 100, bottom: 700)),
                .brightness(-40), .contrast(40), .rgb(red: 20, green: -20, blue: 0), .noise(amount: 40, seed: 0), .noise(amount: 10, seed: 7),
                .watermark(url: "wm.png", x: .percent(10, fromEnd: true), y: .center, alpha: 50, widthRatio: nil, heightRatio: nil),
                .watermark(url: "a,b.png", x: .repeat, y: .pixels(0, fromEnd: true), alpha: 0, widthRatio: 20, heightRatio: nil),
                .maxAge(60), .autoJPEG(true),
            ])
    }

    @Test(
        "an unknown filter or arguments that do not match are a 400 naming the filter (thumbor skips them)",
        arguments: [
            ("nosuchfilter(1)", "nosuchfilter"), ("quality(abc)", "quality(abc)"), ("quality(-5)", "quality(-5)"), ("blur(0)", "blur(0)"),
            ("blur()", "blur()"), ("sharpen(2,1.0)", "sharpen(2,1.0)"), ("watermark(wm.png,10,10)", "watermark(wm.png,10,10)"),
            ("quality(50)grayscale()", "quality(50)grayscale()"), ("grayscale:quality(50)", "grayscale:quality"),
            ("round_corner(20,256,0,0)", "round_corner(20,256,0,0)"), ("focal(100x100)", "focal(100x100)"), ("grayscale(1)", "grayscale(1)"),
            ("fill(#fff)", "fill(#fff)"), ("fill(zzzz)", "fill(zzzz)"), ("watermark(wm.png,10q,0,0)", "watermark(wm.png,10q,0,0)"),
            ("quality(50,1)", "quality(50,1)"),
        ])
    func badFilters(text: String, named: String) {
        #expect {
            _ = try ThumborFilter.list(text)
        } throws: { error in
            (error as? OptionError)?.option == named
        }
    }

    @Test("property: any path of thumbor's punctuation parses or is refused with an error, and its filters too; nothing traps or hangs")
    func randomPaths() throws {
        var generator = SeededGenerator(seed: 27)
        let alphabet = Array("/unsafemtrx:-0123456789(),'%|p=fil ters:quality(fill)water")
        var parsed = 0
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...60, using: &generator)
            let text = "/" + String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard let path = try? Path(Substring(text)) else { continue }
            parsed += 1
            _ = try? ThumborFilter.list(path.filters)
            _ = ThumborDialect().sourceURL(for: path.image)
            #expect(path.signedText.hasSuffix(path.image))
        }
        #expect(parsed > 1_000)
        for text in ["quality(50,)", "fill(,)", "watermark(',',1,1,1)", "rgb(1,,2)", "focal('1x1:2x2')", "quality('50')"] {
            _ = try? ThumborFilter.list(text)
        }
    }
}
