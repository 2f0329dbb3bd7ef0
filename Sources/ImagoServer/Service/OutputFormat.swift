import Imago

/// An answer's format; `jpegOrPNG` is settled by the image's alpha. The
/// raw values are the case names, part of the result cache's keys.
enum OutputFormat: String, Sendable, Equatable {
    case jpeg, png, webp, avif, jpegOrPNG

    /// The format to answer in: an explicit one, or for `auto` AVIF, then
    /// WebP, as the client's Accept field allows, else JPEG (PNG for
    /// images with alpha). Throws a 422 for a format Imago does not write.
    init(_ format: ProcessingOptions.Format, accept: String) throws(ServiceError) {
        switch format {
        case .jpeg: self = .jpeg
        case .png: self = .png
        case .webp: self = .webp
        case .avif: self = .avif
        case .auto: self = Self.accepts("image/avif", accept) ? .avif : Self.accepts("image/webp", accept) ? .webp : .jpegOrPNG
        case .gif, .jxl, .heic, .bmp, .tiff, .ico, .svg:
            throw ServiceError(.unprocessableContent, "the output format \(format.rawValue) is not supported: jpeg, png, webp and avif are")
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

    /// The quality `options` ask for in this format: `q`, else `fq`'s for
    /// the format, else the service's for the format, else its default.
    func quality(_ options: ProcessingOptions, serviceQuality: Int, serviceFormatQuality: [ProcessingOptions.Format: Int]) -> Int {
        let named: ProcessingOptions.Format =
            switch self {
            case .jpeg, .jpegOrPNG: .jpeg
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            }
        if options.quality > 0 { return options.quality }
        if let quality = options.formatQuality[named], quality > 0 { return quality }
        if let quality = serviceFormatQuality[named], quality > 0 { return quality }
        return serviceQuality
    }

    /// The encoder that writes this format at `quality` (1-100, where the
    /// format has one), with `metadata`.
    func encoder(quality: Int, metadata: ImageMetadata = ImageMetadata()) -> any ImageEncoding {
        switch self {
        case .jpeg: JPEGEncoder(quality: quality, metadata: metadata)
        case .png: PNGEncoder(metadata: metadata)
        case .webp: WebPEncoder(quality: Float(quality), metadata: metadata)
        case .avif: AVIFEncoder(quality: quality, metadata: metadata)
        case .jpegOrPNG: AlphaAwareEncoder(opaque: JPEGEncoder(quality: quality, metadata: metadata), alpha: PNGEncoder(metadata: metadata))
        }
    }
}
