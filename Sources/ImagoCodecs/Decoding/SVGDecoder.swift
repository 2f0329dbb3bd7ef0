import CRsvg
import Foundation

/// Rasterises SVG with librsvg (2.54 on Debian 12) and cairo, at the size
/// it will be shown at: a vector has no resolution to lose, so unlike the
/// raster decoders it renders at the target size even when that is larger
/// than the document's own (``ImageDecodingOptions/targetSize``, filled or
/// fitted as ``ImageDecodingOptions/contentMode`` says; a side of 0 is
/// free). Without a target size it renders at its intrinsic size
/// (``ImageHeader/storedSize``): the root's `width` and `height`, else its
/// `viewBox`, else 300x150 (see ``SVGIntrinsicSize``).
///
/// Before librsvg sees the document, it is
/// - refused past ``Limits/maximumByteCount`` bytes;
/// - sanitised (``SVGSanitizer``, embedded images PNG, JPEG and GIF only):
///   no DOCTYPE entities (XXE and "billion laughs" are refused), scripts,
///   foreign content, or links other than fragments and image data URLs;
/// - measured (``SVGStructure``): refused past the limits on elements
///   drawn (every `<use>`, `url(#)` and marker followed), nesting, filter
///   primitive runs and text, for filter parameters librsvg cannot take
///   (an `feConvolveMatrix` past 400 taps aborts it; `feTurbulence` past
///   10 octaves), and for an embedded image whose header declares more
///   than ``ImageDecodingOptions/maximumPixelCount`` pixels (all of them
///   together, too);
/// - refused if its intrinsic size or the render size declares more
///   pixels than allowed, before any surface is allocated.
///
/// librsvg then reads it from memory without a base URL, so it can load
/// nothing but `data:` URLs, and with libxml2's own limits on (no
/// `RSVG_HANDLE_FLAG_UNLIMITED`), on a thread of its own
/// (``SVGRenderThreads``). The counts above refuse the documents built to
/// multiply work, but not every slow one (a path of a million segments
/// across the canvas, a wide `feMorphology`): librsvg cannot stop a
/// render, so past ``Limits/renderCPUTimeLimit`` the decode fails and the
/// render is left to finish on its thread, its result dropped; while
/// ``Limits/maximumOverdueRenders`` are running, SVG decodes are refused.
///
/// Output: ``Image/PixelFormat/rgba8``, straight alpha (cairo's
/// premultiplied pixels are divided out), in sRGB as SVG colours are.
public struct SVGDecoder: ImageDecoding {
    /// How much work a document may ask for. The defaults take in real
    /// drawings, maps and icon sheets and refuse documents built to stall
    /// a renderer.
    public struct Limits: Sendable, Hashable {
        /// The largest document, in bytes. Default: 10 MiB.
        public var maximumByteCount: Int
        /// The most elements drawn, every reference followed (an element a
        /// `<use>` draws ten times counts ten times). Default: 200,000.
        public var maximumDrawnElementCount: Int
        /// The deepest nesting of elements. Default: 200 (libxml2 refuses 256).
        public var maximumNestingDepth: Int
        /// The most filter primitives run, every reference followed: each
        /// runs over its whole region, so these cost the most. Default: 200.
        public var maximumFilterPrimitiveRuns: Int
        /// The most text laid out, every reference followed: a text node of
        /// n characters costs (n + 64)², as librsvg's layout time grows
        /// with the square of a node's length. Default: 10,000,000 (a node
        /// of 3,000 characters, or 2,000 short labels).
        public var maximumTextCost: Int
        /// How much CPU time librsvg's render may use before the caller
        /// stops waiting for it; nil renders on the caller's thread, without
        /// a limit. It counts the render thread's own time, so a busy
        /// machine makes a render slower, never refused. Default: 10 s.
        public var renderCPUTimeLimit: Duration?
        /// How many renders past their time limit may still be running, in
        /// the process, before SVG decodes are refused. Default: 2.
        public var maximumOverdueRenders: Int

        /// Creates limits.
        public init(
            maximumByteCount: Int = 10 << 20, maximumDrawnElementCount: Int = 200_000, maximumNestingDepth: Int = 200,
            maximumFilterPrimitiveRuns: Int = 200, maximumTextCost: Int = 10_000_000, renderCPUTimeLimit: Duration? = .seconds(10),
            maximumOverdueRenders: Int = 2
        ) {
            self.maximumByteCount = maximumByteCount
            self.maximumDrawnElementCount = maximumDrawnElementCount
            self.maximumNestingDepth = maximumNestingDepth
            self.maximumFilterPrimitiveRuns = maximumFilterPrimitiveRuns
            self.maximumTextCost = maximumTextCost
            self.renderCPUTimeLimit = renderCPUTimeLimit
            self.maximumOverdueRenders = maximumOverdueRenders
        }
    }

    /// The largest side cairo draws.
    static let maximumSide = 32_767

    /// How much work a document may ask for.
    public var limits: Limits

    /// Creates an SVG decoder.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public func canDecode(_ format: ImageFormat) -> Bool { format == .svg }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        guard data.count <= limits.maximumByteCount else {
            throw ImageDecodingError(
                code: .refused, format: .svg, detail: "the document is \(data.count) bytes, over the limit of \(limits.maximumByteCount)")
        }
        let document = try SVGSanitizer(embeddedImages: .raster).sanitize(data)
        let structure: SVGStructure
        do {
            structure = try SVGStructure(scanning: document, maximumElementCount: limits.maximumDrawnElementCount)
        } catch {
            throw SVGSanitizer.decodingError(error)
        }
        try check(structure, options: options)
        let stored = structure.intrinsicSize.pixelSize
        try options.checkPixelCount(width: stored.width, height: stored.height, format: .svg)
        let size = Self.renderedSize(of: stored, options: options)
        try options.checkPixelCount(width: size.width, height: size.height, format: .svg)
        guard size.width <= Self.maximumSide, size.height <= Self.maximumSide else {
            throw ImageDecodingError(code: .refused, format: .svg, detail: "\(size) has a side over cairo's \(Self.maximumSide) pixels")
        }
        let viewport = structure.intrinsicSize
        guard let timeLimit = limits.renderCPUTimeLimit else { return try Self.render(document, viewport: viewport, at: size) }
        let outcome = SVGRenderThreads.shared.run(cpuTimeLimit: timeLimit, maximumOverdue: limits.maximumOverdueRenders) {
            Result { () throws(ImageDecodingError) in try Self.render(document, viewport: viewport, at: size) }
        }
        switch outcome {
        case .finished(let result):
            return try result.get()
        case .overdue:
            throw ImageDecodingError(
                code: .refused, format: .svg,
                detail: "librsvg used more than \(timeLimit) of CPU time to render \(size); the render runs on, its result dropped")
        case .refused(let overdue):
            throw ImageDecodingError(
                code: .refused, format: .svg,
                detail: "\(overdue) renders past their time limit are still running (at most \(limits.maximumOverdueRenders) may)")
        }
    }

    /// The size an SVG whose intrinsic size is `stored` is rendered at for
    /// `options`: scaled, its aspect ratio kept, to fill (or fit) the
    /// target size, up as well as down; a target side of 0 is free.
    public static func renderedSize(of stored: ImageSize, options: ImageDecodingOptions) -> ImageSize {
        guard let target = options.targetSize, target.width > 0 || target.height > 0 else { return stored }
        let widthScale = Double(target.width) / Double(stored.width)
        let heightScale = Double(target.height) / Double(stored.height)
        let scale: Double
        if target.width <= 0 {
            scale = heightScale
        } else if target.height <= 0 {
            scale = widthScale
        } else {
            scale = options.contentMode == .fill ? max(widthScale, heightScale) : min(widthScale, heightScale)
        }
        // Capped: a scale past any pixel limit is refused, never a trap.
        func side(_ length: Int) -> Int { max(1, Int(min(Double(length) * scale, 1e9).rounded())) }
        return ImageSize(width: side(stored.width), height: side(stored.height))
    }

    /// Refuses a document past the limits, or embedding an image that
    /// librsvg would decode into more pixels than allowed.
    private func check(_ structure: SVGStructure, options: ImageDecodingOptions) throws(ImageDecodingError) {
        func refuse(_ detail: String) -> ImageDecodingError { ImageDecodingError(code: .refused, format: .svg, detail: detail) }
        func count(_ value: Int, _ limit: Int) -> String { value >= SVGStructure.countLimit ? "more than \(limit)" : "\(value)" }
        let cost = structure.cost
        if cost.elements > limits.maximumDrawnElementCount {
            let count = count(cost.elements, limits.maximumDrawnElementCount)
            throw refuse("the document draws \(count) elements (references followed), over the limit of \(limits.maximumDrawnElementCount)")
        }
        if structure.depth > limits.maximumNestingDepth {
            throw refuse("elements nest \(structure.depth) deep, over the limit of \(limits.maximumNestingDepth)")
        }
        if cost.filterRuns > limits.maximumFilterPrimitiveRuns {
            let count = count(cost.filterRuns, limits.maximumFilterPrimitiveRuns)
            throw refuse("the document runs \(count) filter primitives (references followed), over the limit of \(limits.maximumFilterPrimitiveRuns)")
        }
        if cost.text > limits.maximumTextCost {
            throw refuse(
                "the document's text costs \(count(cost.text, limits.maximumTextCost)) to lay out, over the limit of \(limits.maximumTextCost)")
        }
        if let unsupported = structure.unsupportedFilter { throw refuse(unsupported) }
        var total = 0
        for image in structure.embeddedImages {
            let format = ImageFormat(sniffing: image)
            guard [.png, .jpeg, .gif].contains(format), let size = ImageDecodingOptions.declaredSize(of: image) else {
                throw ImageDecodingError(code: .corrupt, format: .svg, detail: "an embedded image is not a PNG, JPEG or GIF whose size can be read")
            }
            try options.checkPixelCount(width: size.width, height: size.height, format: .svg)
            total += size.width * size.height
            guard total <= options.maximumPixelCount else {
                throw ImageDecodingError(
                    code: .tooManyPixels(width: size.width, height: size.height, limit: options.maximumPixelCount), format: .svg,
                    detail: "the embedded images together")
            }
        }
    }

    /// Renders `document` (sanitised: the tests hand it unsanitised, to see
    /// librsvg refuse external files and URLs on its own) with its
    /// `viewport` (the intrinsic size, in CSS pixels) scaled to `size`,
    /// into RGBA.
    static func render(_ document: Data, viewport: SVGIntrinsicSize, at size: ImageSize) throws(ImageDecodingError) -> Image {
        var error: UnsafeMutablePointer<GError>?
        let handle = document.withUnsafeBytes { bytes in
            rsvg_handle_new_from_data(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &error)
        }
        guard let handle else { throw Self.failure(error, "librsvg could not read the document") }
        defer { g_object_unref(UnsafeMutableRawPointer(handle)) }
        rsvg_handle_set_dpi(handle, 96)
        let stride = size.width * 4
        var pixels = [UInt8](repeating: 0, count: stride * size.height)
        let drawn = pixels.withUnsafeMutableBytes { buffer -> Result<Void, ImageDecodingError> in
            let surface = cairo_image_surface_create_for_data(
                buffer.bindMemory(to: UInt8.self).baseAddress, CAIRO_FORMAT_ARGB32, Int32(size.width), Int32(size.height), Int32(stride))
            defer { cairo_surface_destroy(surface) }
            guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let context = cairo_create(surface) else {
                return .failure(ImageDecodingError(code: .corrupt, format: .svg, detail: "cairo could not make a \(size) surface"))
            }
            defer { cairo_destroy(context) }
            cairo_scale(context, Double(size.width) / viewport.width, Double(size.height) / viewport.height)
            var rectangle = RsvgRectangle(x: 0, y: 0, width: viewport.width, height: viewport.height)
            var error: UnsafeMutablePointer<GError>?
            guard rsvg_handle_render_document(handle, context, &rectangle, &error) != 0 else {
                return .failure(Self.failure(error, "librsvg could not render the document"))
            }
            cairo_surface_flush(surface)
            return .success(())
        }
        try drawn.get()
        Self.unpremultiply(&pixels)
        guard let image = Image(width: size.width, height: size.height, pixelFormat: .rgba8, pixels: pixels) else {
            throw ImageDecodingError(code: .corrupt, format: .svg, detail: "inconsistent sizes")
        }
        return image
    }

    /// cairo's ARGB32 (premultiplied, in native-endian 32-bit words) made
    /// straight RGBA bytes, in place.
    static func unpremultiply(_ pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBytes { bytes in
            for offset in stride(from: 0, to: bytes.count - 3, by: 4) {
                let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                let alpha = word >> 24
                var red = word >> 16 & 0xFF
                var green = word >> 8 & 0xFF
                var blue = word & 0xFF
                if alpha == 0 {
                    (red, green, blue) = (0, 0, 0)
                } else if alpha < 255 {
                    red = min(255, (red * 255 + alpha / 2) / alpha)
                    green = min(255, (green * 255 + alpha / 2) / alpha)
                    blue = min(255, (blue * 255 + alpha / 2) / alpha)
                }
                bytes[offset] = UInt8(red)
                bytes[offset + 1] = UInt8(green)
                bytes[offset + 2] = UInt8(blue)
                bytes[offset + 3] = UInt8(alpha)
            }
        }
    }

    /// The error for a librsvg failure, with its message (the GError freed).
    private static func failure(_ error: UnsafeMutablePointer<GError>?, _ fallback: String) -> ImageDecodingError {
        guard let error else { return ImageDecodingError(code: .corrupt, format: .svg, detail: fallback) }
        defer { g_error_free(error) }
        let message = error.pointee.message.map { String(cString: $0) } ?? fallback
        return ImageDecodingError(code: .corrupt, format: .svg, detail: "librsvg: " + message)
    }
}
