import Imago

/// An answer's format; `jpegOrPNG` is settled by the image: GIF for an
/// animation, PNG for alpha, else JPEG. `svg` is an SVG source itself,
/// sanitised, never an encoding: ``ImageService/passedThrough(_:of:options:format:ticket:)``
/// answers it, or refuses it for a raster source. The raw values are the
/// case names, part of the result cache's keys.
enum OutputFormat: String, Sendable, Equatable {
    case jpeg, png, webp, avif, gif, jxl, jpegOrPNG, svg

    /// The format to answer in: an explicit one, or for `auto` AVIF, then
    /// WebP, then JPEG XL, as the client's Accept field allows, else JPEG
    /// (GIF for an animation, PNG for images with alpha). Throws a 422 for
    /// a format Imago does not write; `svg` is for SVG sources only.
    init(_ format: ProcessingOptions.Format, accept: String) throws(ServiceError) {
        switch format {
        case .jpeg: self = .jpeg
        case .png: self = .png
        case .webp: self = .webp
        case .avif: self = .avif
        case .gif: self = .gif
        case .jxl: self = .jxl
        case .svg: self = .svg
        case .auto:
            let preferred: [(String, OutputFormat)] = [("image/avif", .avif), ("image/webp", .webp), ("image/jxl", .jxl)]
            self = preferred.first { Self.accepts($0.0, accept) }?.1 ?? .jpegOrPNG
        case .heic, .bmp, .tiff, .ico:
            throw ServiceError(
                .unprocessableContent,
                "the output format \(format.rawValue) is not supported: jpeg, png, webp, avif, gif and jxl are, and svg for SVG sources"
            )
        }
    }

    /// Whether the Accept field names `mediaType` itself with a weight above
    /// zero. Wildcards do not count: `image/*` and `*/*` say nothing about
    /// whether a client decodes AVIF or WebP.
    static func accepts(_ mediaType: String, _ accept: String) -> Bool {
        accept.split(separator: ",").contains { range in
            let parameters = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parameters.first == mediaType else { return false }
            let weight = parameters.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return weight > 0
        }
    }

    /// Whether the format has no alpha channel, so that transparent pixels
    /// must be filled.
    var isOpaque: Bool { self == .jpeg }

    /// The quality a plan asks for in this format: `quality` (`q`), else
    /// `formatQuality`'s for the format (`fq`), else the service's for the
    /// format, else its default.
    func quality(
        _ quality: Int, formatQuality: [ProcessingOptions.Format: Int], serviceQuality: Int, serviceFormatQuality: [ProcessingOptions.Format: Int]
    ) -> Int {
        let named: ProcessingOptions.Format =
            switch self {
            case .jpeg, .jpegOrPNG: .jpeg
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            case .gif: .gif
            case .jxl: .jxl
            case .svg: .svg
            }
        if quality > 0 { return quality }
        if let quality = formatQuality[named], quality > 0 { return quality }
        if let quality = serviceFormatQuality[named], quality > 0 { return quality }
        return serviceQuality
    }

    /// The encoder that writes this format at `quality` (1-100, where the
    /// format has one), with `metadata`. `svg` is never encoded (an SVG
    /// source is answered as itself, a raster one refused, before any
    /// decode): PNG stands in.
    func encoder(quality: Int, metadata: ImageMetadata = ImageMetadata()) -> any ImageEncoding {
        switch self {
        case .jpeg: JPEGEncoder(quality: quality, metadata: metadata)
        case .png: PNGEncoder(metadata: metadata)
        case .webp: WebPEncoder(quality: Float(quality), metadata: metadata)
        case .avif: AVIFEncoder(quality: quality, metadata: metadata)
        case .gif: GIFEncoder()
        case .jxl: JXLEncoder(quality: quality, metadata: metadata)
        case .svg: PNGEncoder(metadata: metadata)
        case .jpegOrPNG: AlphaAwareEncoder(opaque: JPEGEncoder(quality: quality, metadata: metadata), alpha: PNGEncoder(metadata: metadata))
        }
    }

    /// The encoder that writes an animation in this format; nil for a
    /// format without animation (JPEG, PNG, JPEG XL), whose answer is the
    /// first frame. `jpegOrPNG` animates as GIF, the one format every
    /// client plays; AVIF sequences always loop (libavif 0.11 writes no
    /// loop count).
    func animatedEncoder(quality: Int, metadata: ImageMetadata = ImageMetadata()) -> (any AnimatedImageEncoding)? {
        switch self {
        case .webp: WebPEncoder(quality: Float(quality), metadata: metadata)
        case .avif: AVIFEncoder(quality: quality, metadata: metadata)
        case .gif, .jpegOrPNG: GIFEncoder()
        case .jpeg, .png, .jxl, .svg: nil
        }
    }
}
