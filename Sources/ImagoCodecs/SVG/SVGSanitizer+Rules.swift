import Foundation

/// What the sanitiser keeps of an element and of an attribute.
extension SVGSanitizer {
    /// The elements kept, by name without prefix: SVG 1.1's and SVG 2's
    /// that draw, define or describe, but not `<script>`,
    /// `<foreignObject>`, HTML's media elements SVG 2 borrows (`video`,
    /// `audio`, `iframe`, `canvas`), SVG Tiny's `handler`, `listener` and
    /// `animation`, `font-face-uri` or `color-profile` (which fetch).
    public static let allowedElements: Set<String> = [
        "a", "altGlyph", "altGlyphDef", "altGlyphItem", "animate", "animateColor", "animateMotion", "animateTransform", "circle",
        "clipPath", "defs", "desc", "ellipse", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix",
        "feDiffuseLighting", "feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood", "feFuncA", "feFuncB", "feFuncG", "feFuncR",
        "feGaussianBlur", "feImage", "feMerge", "feMergeNode", "feMorphology", "feOffset", "fePointLight", "feSpecularLighting",
        "feSpotLight", "feTile", "feTurbulence", "filter", "font", "font-face", "font-face-format", "font-face-name", "font-face-src",
        "g", "glyph", "glyphRef", "hkern", "image", "line", "linearGradient", "marker", "mask", "metadata", "missing-glyph", "mpath",
        "path", "pattern", "polygon", "polyline", "radialGradient", "rect", "set", "solidcolor", "stop", "style", "svg", "switch",
        "symbol", "text", "textPath", "title", "tref", "tspan", "use", "view", "vkern",
    ]

    /// HTML's attributes that hold URLs, dropped wherever they appear.
    private static let urlAttributes: Set<String> = [
        "src", "srcset", "srcdoc", "action", "formaction", "background", "poster", "ping", "lowsrc", "dynsrc", "codebase", "archive",
        "data", "base",
    ]

    /// The animation elements, which may set another attribute.
    private static let animations: Set<String> = ["animate", "animateColor", "animateMotion", "animateTransform", "set"]

    /// Whether `tag` is written: an allowed element, and no animation of
    /// a link or of an event handler (`<set attributeName="href" to="javascript:...">`).
    static func keeps(_ tag: XMLStartTag) -> Bool {
        let name = String(tag.localName)
        guard allowedElements.contains(name) else { return false }
        if animations.contains(name), let target = tag.value(of: "attributeName") {
            let local = (target.split(separator: ":").last.map(String.init) ?? target).trimmingCharacters(in: .whitespaces).lowercased()
            if ASCIISearch.contains("href", in: local) || local.hasPrefix("on") { return false }
        }
        return true
    }

    /// The value `attribute` of `tag` is written with; nil when it goes.
    static func sanitizedValue(of attribute: XMLAttribute, in tag: XMLStartTag, embeddedImages: EmbeddedImages) -> String? {
        let name = attribute.localName.lowercased()
        let value = attribute.value
        if name.hasPrefix("on") || urlAttributes.contains(name) || namesScript(value) { return nil }
        if name == "href" { return isAllowedLink(value, in: tag, embeddedImages: embeddedImages) ? value : nil }
        if name == "style" { return CSSSanitizer.sanitized(value) }
        // A presentation attribute's value is CSS: `fill="url(http://...)"` fetches.
        if value.utf8.contains(UInt8(ascii: "\\")) || ASCIISearch.contains("url(", in: value) { return CSSSanitizer.sanitized(value) }
        return value
    }

    /// Whether `value` names a script URL anywhere, read as a URL parser
    /// reads one (control characters and whitespace dropped, any case).
    static func namesScript(_ value: String) -> Bool {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: ":") }) else { return false }
        let squeezed = String(decoding: value.utf8.filter { $0 > 0x20 }, as: UTF8.self)
        return ASCIISearch.contains("javascript:", in: squeezed) || ASCIISearch.contains("vbscript:", in: squeezed)
    }

    /// Whether a link may stay: a fragment of the document, or on an
    /// element other than `<use>` an image data URL of the kinds
    /// `embeddedImages` allows.
    static func isAllowedLink(_ value: String, in tag: XMLStartTag, embeddedImages: EmbeddedImages) -> Bool {
        let link = String(decoding: value.utf8.filter { $0 > 0x20 }, as: UTF8.self)
        if link.hasPrefix("#") { return true }
        guard tag.localName != "use", let type = dataURLMediaType(link), type.hasPrefix("image/") else { return false }
        switch embeddedImages {
        case .all: return true
        case .raster: return ["image/png", "image/jpeg", "image/jpg", "image/gif"].contains(type)
        }
    }

    /// The media type of a `data:` URL, lowercased; nil for another URL.
    static func dataURLMediaType(_ link: String) -> String? {
        guard link.utf8.count > 5, link.prefix(5).lowercased() == "data:" else { return nil }
        let rest = link.dropFirst(5)
        return rest.prefix { $0 != ";" && $0 != "," }.lowercased()
    }
}
