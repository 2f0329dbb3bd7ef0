import Foundation
import ImagoCaching
import ImagoCodecs
import Testing

@testable import ImagoServer

/// imgproxy's processing language, option by option, with the argument
/// rules of its code (v3.31, `options/processing_options.go`): the cases of
/// its own tests and of its documentation, then the edge cases.
@Suite("imgproxy options: names, arguments, defaults, presets")
struct ProcessingOptionsParserTests {
    let parser = ProcessingOptions.Parser(now: { 1_700_000_000 })

    func parse(_ path: String, with parser: ProcessingOptions.Parser? = nil) throws -> ProcessingOptions {
        try (parser ?? self.parser).options(path.split(separator: "/"))
    }

    func error(_ path: String, with parser: ProcessingOptions.Parser? = nil) -> OptionError? {
        #expect(throws: OptionError.self, "\(path)") { _ = try self.parse(path, with: parser) }
        do {
            _ = try parse(path, with: parser)
            return nil
        } catch { return error as? OptionError }
    }

    @Test("size: rs, s, rt, w, h, mw, mh, z, dpr, el, ex, exar")
    func size() throws {
        let resize = try parse("resize:fill:100:200:1")
        #expect(resize.resizingType == .fill && resize.width == 100 && resize.height == 200 && resize.enlarge)
        let size = try parse("s:100:200:1:1:so:10:20")
        #expect(size.width == 100 && size.height == 200 && size.enlarge && size.extend.isEnabled)
        #expect(size.extend.gravity == ProcessingOptions.Gravity(.south, x: 10, y: 20))
        for type in ProcessingOptions.ResizingType.allCases {
            #expect(try parse("rt:\(type.rawValue)").resizingType == type)
            #expect(try parse("resizing_type:\(type.rawValue)").resizingType == type)
        }
        #expect(try parse("width:100").width == 100 && parse("w:100").width == 100)
        #expect(try parse("height:100").height == 100 && parse("h:100").height == 100)
        #expect(try parse("min-width:30").minWidth == 30 && parse("mh:40").minHeight == 40)
        let zoom = try parse("z:1.5")
        #expect(zoom.zoomWidth == 1.5 && zoom.zoomHeight == 1.5)
        let zoom2 = try parse("zoom:2:0.5")
        #expect(zoom2.zoomWidth == 2 && zoom2.zoomHeight == 0.5)
        #expect(try parse("dpr:2").dpr == 2)
        #expect(try parse("enlarge:1").enlarge && parse("el:true").enlarge)
        let extend = try parse("extend:1:so:10:20")
        #expect(extend.extend == .init(isEnabled: true, gravity: .init(.south, x: 10, y: 20)))
        let aspect = try parse("exar:1:fp:0.2:0.8")
        #expect(aspect.extendAspectRatio == .init(isEnabled: true, gravity: .init(.focusPoint, x: 0.2, y: 0.8)))
        #expect(try parse("extend_ar:t").extendAspectRatio.isEnabled && parse("extend_aspect_ratio:1").extendAspectRatio.isEnabled)
        // Extend takes neither smart nor replicate gravity.
        #expect(error("extend:1:sm")?.option == "extend:1:sm")
        #expect(error("ex:1:re") != nil)
        for bad in [
            "w:-1", "w:1.5", "w:", "w:1:2", "h:abc", "rt:stretch", "rt:", "z:0", "z:-1", "z:inf", "dpr:0", "dpr:nan", "rs:fill:1:2:3:4:5:6:7:8",
        ] {
            #expect(error(bad)?.option == bad, "\(bad)")
        }
    }

    @Test("empty arguments keep what was there; booleans read as Go's ParseBool")
    func emptyArgumentsAndBooleans() throws {
        // rs with only a height; s with only enlarge; the type kept.
        let resize = try parse("rt:fill/w:50/rs::0:300")
        #expect(resize.resizingType == .fill && resize.width == 0 && resize.height == 300)
        let kept = try parse("w:50/h:60/s:::1")
        #expect(kept.width == 50 && kept.height == 60 && kept.enlarge)
        let flip = try parse("fl::1")
        #expect(!flip.flipHorizontal && flip.flipVertical)
        for truthy in ["1", "t", "T", "true", "TRUE", "True"] { #expect(try parse("el:\(truthy)").enlarge, "\(truthy)") }
        // Anything else is false, as imgproxy takes it (with a warning in its log).
        for falsy in ["0", "f", "false", "yes", "on", "2", ""] { #expect(try !parse("el:1/el:\(falsy)").enlarge, "\(falsy)") }
    }

    @Test("position: g, c, t, pd, ar, rot, fl, bg")
    func position() throws {
        #expect(try parse("gravity:soea").gravity == .init(.southEast))
        #expect(try parse("g:no:10:0.25").gravity == .init(.north, x: 10, y: 0.25))
        #expect(try parse("g:fp:0.5:0.75").gravity == .init(.focusPoint, x: 0.5, y: 0.75))
        #expect(try parse("g:sm").gravity == .init(.smart))
        for anchor in ProcessingOptions.Gravity.Anchor.allCases where ![.smart, .focusPoint, .replicate].contains(anchor) {
            #expect(try parse("g:\(anchor.rawValue)").gravity.anchor == anchor)
        }
        for bad in ["g:re", "g:sm:1", "g:fp:0.5", "g:fp:1.5:0.5", "g:fp:-0.1:0", "g:no:1:2:3", "g:", "g:north", "g:ce:x"] {
            #expect(error(bad)?.option == bad, "\(bad)")
        }
        let crop = try parse("crop:100:200")
        #expect(crop.crop == .init(width: 100, height: 200, gravity: nil))
        #expect(try parse("c:100:200:nowe:10:20").crop == .init(width: 100, height: 200, gravity: .init(.northWest, x: 10, y: 20)))
        #expect(try parse("c:0.5:0.25:sm").crop == .init(width: 0.5, height: 0.25, gravity: .init(.smart)))
        #expect(error("c:100:200:re") != nil && error("c:-1") != nil && error("c:") != nil)
        let trim = try parse("trim:10:ffddee:1:0")
        #expect(trim.trim.isEnabled && trim.trim.threshold == 10 && trim.trim.color == Color(red: 0xFF, green: 0xDD, blue: 0xEE))
        #expect(trim.trim.equalHorizontal && !trim.trim.equalVertical)
        #expect(try parse("t:5").trim == .init(isEnabled: true, threshold: 5, color: nil))
        #expect(error("t:") != nil && error("t:-1") != nil && error("t:5:ggg") != nil && error("t:1:2:3:4:5") != nil)
        // Padding as CSS: all, then right and left, bottom, left.
        #expect(try parse("padding:10").padding == .init(top: 10, right: 10, bottom: 10, left: 10))
        #expect(try parse("pd:10:20").padding == .init(top: 10, right: 20, bottom: 10, left: 20))
        #expect(try parse("pd:10:20:30").padding == .init(top: 10, right: 20, bottom: 30, left: 20))
        #expect(try parse("pd:10:20:30:40").padding == .init(top: 10, right: 20, bottom: 30, left: 40))
        #expect(try parse("pd:10/pd::5").padding == .init(top: 10, right: 5, bottom: 10, left: 5))
        #expect(error("pd:1:2:3:4:5") != nil && error("pd:-1") != nil)
        #expect(try !parse("auto_rotate:0").autoRotate && parse("ar:1").autoRotate)
        #expect(try parse("rotate:90").rotate == 90 && parse("rot:-90").rotate == 270 && parse("rot:720").rotate == 0)
        #expect(error("rot:45") != nil && error("rot:") != nil)
        let flip = try parse("flip:1:1")
        #expect(flip.flipHorizontal && flip.flipVertical)
        #expect(try parse("fl:1").flipHorizontal)
        let background = try parse("background:128:129:130")
        #expect(background.flatten && background.background == Color(red: 128, green: 129, blue: 130))
        #expect(try parse("bg:ffddee").background == Color(red: 0xFF, green: 0xDD, blue: 0xEE))
        #expect(try parse("bg:fd0").background == Color(red: 0xFF, green: 0xDD, blue: 0x00))
        // bg: turns flattening off but keeps the colour (for formats without alpha).
        let disabled = try parse("bg:f00/bg:")
        #expect(!disabled.flatten && disabled.background == Color(red: 255, green: 0, blue: 0))
        for bad in ["bg:ff", "bg:gggggg", "bg:1:2", "bg:256:0:0", "bg:-1:0:0", "bg:1:2:3:4"] { #expect(error(bad) != nil, "\(bad)") }
    }

    @Test("effects: bl, sh, pix, wm")
    func effects() throws {
        #expect(try parse("blur:0.2").blur == 0.2 && parse("bl:3").blur == 3)
        #expect(try parse("sharpen:0.2").sharpen == 0.2 && parse("sh:1").sharpen == 1)
        #expect(try parse("pixelate:8").pixelate == 8 && parse("pix:0").pixelate == 0)
        #expect(error("bl:-1") != nil && error("sh:x") != nil && error("pix:1.5") != nil)
        let watermark = try parse("watermark:0.5:soea:10:20:0.6")
        #expect(watermark.watermark == .init(opacity: 0.5, isEnabled: true, position: .init(.southEast, x: 10, y: 20), scale: 0.6))
        #expect(try parse("wm:1:re").watermark.position.anchor == .replicate)
        #expect(try !parse("wm:0").watermark.isEnabled)
        // Each wm keeps what an earlier one set and it does not.
        let merged = try parse("wm:0.5:soea:10/wm:1")
        #expect(merged.watermark == .init(opacity: 1, isEnabled: true, position: .init(.southEast, x: 10), scale: 0))
        for bad in ["wm:2", "wm:-0.1", "wm:1:sm", "wm:1:fp", "wm:1:ce:x", "wm:1:ce:0:0:-1", "wm:1:2:3:4:5:6:7:8"] {
            #expect(error(bad) != nil, "\(bad)")
        }
    }

    @Test("output: q, fq, mb, f/ext, sm, kcr, scp, eth")
    func output() throws {
        #expect(try parse("quality:55").quality == 55 && parse("q:0").quality == 0)
        #expect(try parse("fq:webp:70:avif:40:jpg:90").formatQuality == [.webp: 70, .avif: 40, .jpeg: 90])
        #expect(error("fq:webp") != nil && error("fq:webp:101") != nil && error("fq:tga:50") != nil)
        #expect(try parse("max_bytes:10000").maxBytes == 10_000 && parse("mb:0").maxBytes == 0)
        for (name, format) in [
            ("webp", ProcessingOptions.Format.webp), ("jpg", .jpeg), ("jpeg", .jpeg), ("png", .png), ("avif", .avif), ("gif", .gif),
        ] {
            #expect(try parse("format:\(name)").format == format && parse("f:\(name)").format == format && parse("ext:\(name)").format == format)
        }
        #expect(error("f:tga") != nil && error("q:101") != nil && error("q:-1") != nil && error("mb:-1") != nil)
        let metadata = try parse("strip_metadata:0/kcr:0/scp:false/eth:1")
        #expect(!metadata.stripMetadata && !metadata.keepCopyright && !metadata.stripColorProfile && metadata.enforceThumbnail)
        let defaults = ProcessingOptions()
        #expect(defaults.stripMetadata && defaults.keepCopyright && defaults.stripColorProfile && defaults.autoRotate && !defaults.enforceThumbnail)
    }

    @Test("behaviour: skp, raw, cb, exp, fn, att")
    func behaviour() throws {
        #expect(try parse("skip_processing:svg:gif").skipProcessing == [.svg, .gif])
        #expect(try parse("skp:jpg/skp:png").skipProcessing == [.jpeg, .png], "skp adds to the list")
        #expect(error("skp:tga") != nil)
        #expect(try parse("raw:1").raw && parse("cachebuster:abc").cacheBuster == "abc" && parse("cb:v2").cacheBuster == "v2")
        #expect(try parse("expires:1800000000").expires == 1_800_000_000)
        #expect(try parse("exp:0").expires == 0, "0 and below never expire")
        let expired = error("exp:1600000000")
        #expect(expired?.kind == .expired && ServiceError(expired!).status == .notFound)
        #expect(error("exp:soon")?.kind == .invalid)
        #expect(try parse("filename:report").filename == "report")
        let encoded = URLSigning.base64URL(Array("résumé \"final\"".utf8))
        #expect(try parse("fn:\(encoded):1").filename == "résumé \"final\"")
        #expect(error("fn:%%%:1") != nil)
        #expect(try parse("return_attachment:1").returnAttachment && parse("att:t").returnAttachment)
    }

    @Test("source limits: a 403 unless the operator allows them; presets may set them")
    func sourceLimits() throws {
        for option in ["msr:1", "max_src_resolution:1", "msfs:1000", "maf:2", "mafr:1", "mrd:100"] {
            let refused = error(option)
            #expect(refused?.kind == .forbidden && ServiceError(refused!).status == .forbidden, "\(option)")
        }
        let allowing = ProcessingOptions.Parser(allowsSourceLimits: true)
        let limits = try parse("msr:2.5/msfs:1000/maf:3/mafr:0.5/mrd:640", with: allowing).sourceLimits
        #expect(
            limits
                == .init(
                    maximumPixelCount: 2_500_000, maximumFileSize: 1_000, maximumAnimationFrames: 3, maximumAnimationFramePixels: 500_000,
                    maximumResultDimension: 640))
        #expect(error("msr:0", with: allowing) != nil && error("maf:0", with: allowing) != nil)
        let presets = try Presets(lines: ["small=mrd:100"])
        #expect(try parse("pr:small", with: .init(presets: presets)).sourceLimits.maximumResultDimension == 100)
    }

    @Test("Imago's own options have names imgproxy's cannot clash with")
    func imagoOptions() throws {
        #expect(try parse("imago_gray:1").grayscale && parse("imago_grayscale:true").grayscale)
        #expect(try parse("imago_radius:12").cornerRadius == 12)
        // The old spellings are gone: `gray` alone is where imgproxy's source starts.
        #expect(error("r:8")?.reason == "unknown option")
        #expect(error("gray")?.reason == "expected name:arguments")
    }

    @Test("an unknown or malformed option is an error naming it, whatever comes before")
    func unknownOptions() {
        for bad in ["bogus:1", "W:100", "width :100", "rs:fill:-1", "p:name"] {
            let error = error("w:10/\(bad)/h:10")
            #expect(error?.option == bad && error?.kind == .invalid, "\(bad)")
            #expect(error.map { ServiceError($0).status } == .badRequest)
            #expect(error?.description.contains(bad) == true)
        }
    }

    @Test("repeats: a later option overrides, in place; order does not change the key")
    func repeatsAndOrder() throws {
        #expect(try parse("w:100/w:200").width == 200)
        // c keeps an earlier height and gravity when it gives none.
        #expect(try parse("c:100:200:no/c:50").crop == .init(width: 50, height: 200, gravity: .init(.north)))
        // t keeps its colour and equal sides when the later one gives only a threshold.
        #expect(
            try parse("t:10:fff:1:1/t:20").trim == .init(isEnabled: true, threshold: 20, color: .white, equalHorizontal: true, equalVertical: true))
        let orders = [
            ["rt:fill", "w:300", "h:200", "g:no"], ["g:no", "h:200", "w:300", "rt:fill"], ["rs:fill:300:200", "g:no"],
            ["resize:fill:300:200", "gravity:no"],
        ]
        let keys = try Set(orders.map { try parse($0.joined(separator: "/")).cacheKey })
        #expect(keys.count == 1)
        // Fields that only change the answer's header fields leave the key alone; the rest change it.
        let base = try parse("w:300").cacheKey
        #expect(try parse("w:300/fn:a/att:1/exp:1800000000").cacheKey == base)
        for other in [
            "w:301", "w:300/q:70", "w:300/cb:1", "w:300/g:no", "w:300/bg:fff", "w:300/bg:f00/bg:", "w:300/pd:0:1", "w:300/sh:0.5", "w:300/f:png",
        ] {
            #expect(try parse(other).cacheKey != base, "\(other)")
        }
        // Text in a cache buster cannot pass for other options.
        #expect(try parse("cb:x;imago_gray=1;").cacheKey != parse("cb:x/imago_gray:1").cacheKey)
    }

    @Test("presets: pr with several names, the default preset first, loops skipped, unknown ones refused")
    func presets() throws {
        let presets = try Presets(lines: [
            "default=q:60/g:no", "thumb=rs:fill:64:48", "webp=f:webp/pr:thumb", "loop=w:10/pr:loop/h:20", "", "# a comment",
        ])
        let parser = ProcessingOptions.Parser(presets: presets)
        let thumb = try parse("pr:thumb", with: parser)
        #expect(thumb.width == 64 && thumb.height == 48 && thumb.resizingType == .fill)
        #expect(thumb.quality == 60 && thumb.gravity.anchor == .north, "the default preset applies first")
        #expect(try parse("q:90", with: parser).quality == 90, "and a URL's options override it")
        let both = try parse("preset:thumb:webp", with: parser)
        #expect(both.format == .webp && both.width == 64 && both.usedPresets == ["default", "thumb", "webp", "thumb"])
        let loop = try parse("pr:loop", with: parser)
        #expect(loop.width == 10 && loop.height == 20)
        #expect(error("pr:nope", with: parser)?.option == "pr:nope")
        #expect(try parser.options(presetNames: ["thumb", "webp"]).format == .webp)
        for bad in ["nameonly", "=w:1", "a=", "a=w:1=2", "a=w:1/gray", "a=bogus:1", "a=w:-1"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { _ = try Presets(lines: [bad]) }
        }
    }

    @Test("paths: options end at the first segment without a colon; @ext and .ext name the format")
    func paths() throws {
        let plain = try ImageURLPath("/sig/rs:fill:300:200/g:sm/plain/http://example.com/a.jpg@webp")
        #expect(plain.options == ["rs:fill:300:200", "g:sm"] && plain.source == "http://example.com/a.jpg" && plain.sourceExtension == "webp")
        let encoded = URLSigning.base64URL(Array("http://example.com/images/curiosity.jpg".utf8))
        let split = try ImageURLPath("/sig/w:10/\(encoded.prefix(10))/\(encoded.dropFirst(10)).png")
        #expect(split.source == "http://example.com/images/curiosity.jpg" && split.sourceExtension == "png")
        #expect(try ImageURLPath("/sig/\(encoded)").options.isEmpty)
        #expect(try ImageURLPath("/sig/plain/http://example.com/a%40b.jpg").source == "http://example.com/a@b.jpg")
        #expect(try ImageURLPath("/sig/plain/http://example.com/a.jpg@").sourceExtension == nil)
        for bad in ["/sig/plain/http://example.com/a@b.jpg@png", "/sig/\(encoded).png.webp", "/sig/w:10/.png", "/sig/w:10/plain/@png"] {
            #expect(throws: PathError.self, "\(bad)") { try ImageURLPath(bad) }
        }
        let presetsOnly = try ImageURLPath("/sig/thumb:webp/plain/http://example.com/a.jpg", presetsOnly: true)
        #expect(presetsOnly.options == ["thumb:webp"] && presetsOnly.source == "http://example.com/a.jpg")
        let oneName = try ImageURLPath("/sig/thumb/\(encoded)", presetsOnly: true)
        #expect(oneName.options == ["thumb"] && oneName.source == "http://example.com/images/curiosity.jpg")
    }

    @Test("the memo reads a spelling once, keeps no error, and starts again when full")
    func memo() throws {
        let memo = OptionsMemo(capacity: 3)
        var reads = 0
        func read(_ text: String) throws -> OptionsMemo.Entry {
            try memo.entry(for: text) { () throws(OptionError) in
                reads += 1
                return try parser.options(text.split(separator: "/"))
            }
        }
        let first = try read("w:100/q:70")
        #expect(try read("w:100/q:70").cacheKey == first.cacheKey && reads == 1)
        #expect(first.cacheKey == (try parse("q:70/width:100")).cacheKey)
        #expect(throws: OptionError.self) { try read("w:-1") }
        #expect(throws: OptionError.self) { try read("w:-1") }
        #expect(reads == 3, "an error is read again each time")
        _ = try read("w:1")
        _ = try read("w:2")
        _ = try read("w:3")
        _ = try read("w:100/q:70")
        #expect(reads == 7, "full at three spellings, it started again")
    }
}
