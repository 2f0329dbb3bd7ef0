import Foundation
import HTTPTypes
import Hummingbird
import Imago

extension ImageService {
    /// What a thumbor URL's filters say about the answer rather than its
    /// pixels; the last of each filter given wins, as in thumbor.
    struct ThumborAnswerSettings: Sendable {
        /// nil keeps the source's format; thumbor's `format()` with a
        /// format it does not know resets it to that.
        var format: ProcessingOptions.Format?
        var quality: Int?
        var maximumBytes = 0
        var maxAge: Int?
        var stripsProfile = false

        init(_ filters: [ThumborFilter]) {
            for filter in filters {
                switch filter {
                case .format(let named): format = named
                case .quality(let value): quality = min(100, max(1, value))
                case .maxBytes(let bytes): maximumBytes = bytes
                case .maxAge(let seconds): maxAge = seconds
                case .stripICC: stripsProfile = true
                default: break
                }
            }
        }

        /// The format to write: the named one, else the source's as thumbor
        /// keeps it (formats Imago does not write as JPEG, as thumbor
        /// writes unknown ones; an SVG as PNG, as thumbor rasterises one
        /// with CairoSVG into a PNG).
        func outputFormat(source: ImageFormat) throws(ServiceError) -> OutputFormat {
            if let format { return try OutputFormat(format, accept: "") }
            switch source {
            case .png, .svg: return .png
            case .gif: return .gif
            case .webp: return .webp
            case .avif: return .avif
            default: return .jpeg
            }
        }
    }

    /// A thumbor URL's answer: the path read as thumbor reads it, its
    /// signature checked on the path as sent before any option is read,
    /// then the same steps as an imgproxy URL (result cache, admission,
    /// source cache, decode, encode), with a ``ThumborProcessor`` laying the
    /// image out.
    func thumborImage(_ request: Request, path: Substring, dialect: ThumborDialect, report: ImageRequestReport?) async throws(ServiceError)
        -> Response
    {
        let thumbor: ThumborPath
        do { thumbor = try ThumborPath(path) } catch { throw ServiceError(.badRequest, "not a thumbor URL: \(error)") }
        report?.record { $0.unsignedPath = "/thumbor/-/" + thumbor.signedText }
        if let signature = thumbor.signature {
            guard let signing = dialect.signing, signing.isValid(signature: signature, for: thumbor.signedText) else {
                throw ServiceError(.forbidden, "the thumbor URL's signature does not match")
            }
        } else if !dialect.allowsUnsafe {
            throw ServiceError(.forbidden, "unsafe thumbor URLs are not accepted by this server")
        }
        var filters: [ThumborFilter]
        do { filters = try ThumborFilter.list(thumbor.filters) } catch { throw ServiceError(error) }
        var image = thumbor.image
        if filters.contains(.extractFocal), let (inner, region) = thumbor.extractedFocalRegion() {
            image = inner
            filters.append(.focal(region))
        }
        guard let url = dialect.sourceURL(for: image) else { throw ServiceError(.badRequest, "the thumbor URL names no source") }
        let source: URL
        do { source = try configuration.sourcePolicy.check(url: url.absoluteString) } catch { throw ServiceError(error) }
        report?.record { $0.sourceHost = source.host }
        let settings = ThumborAnswerSettings(filters)
        let key = ResultKey(source: source, thumborOptions: ThumborProcessor(path: thumbor, filters: filters).identifier)
        let production = Production.thumbor(thumbor, filters: filters, dialect: dialect, settings: settings)
        let result = try await result(for: key, source: source, forwarding: request, report: report, production: production)
        var answerOptions = ProcessingOptions()
        if let maxAge = settings.maxAge { answerOptions.expires = Int(Date().timeIntervalSince1970) + maxAge }
        return answer(result, to: request, options: answerOptions, source: source, negotiated: false)
    }

    /// The images the URL's `watermark()` filters name, read as its image
    /// part is (so under the source policy, through the source cache), and
    /// decoded: thumbor loads them with the same loader.
    func thumborWatermarks(_ filters: [ThumborFilter], dialect: ThumborDialect) async throws(ServiceError) -> [String: Image] {
        var images: [String: Image] = [:]
        for case .watermark(let text, _, _, _, _, _) in filters where images[text] == nil {
            guard let url = dialect.sourceURL(for: Substring(text)) else { throw ServiceError(.badRequest, "the watermark \(text) names no source") }
            let checked: URL
            do { checked = try configuration.sourcePolicy.check(url: url.absoluteString) } catch { throw ServiceError(error) }
            let response: DataResponse
            do { response = try await pipeline.data(for: ImageRequest(url: checked)) } catch { throw ServiceError(error) }
            guard (200..<300).contains(response.statusCode) else {
                throw ServiceError(ImagePipeline.Error.httpStatus(code: response.statusCode, url: checked))
            }
            do { images[text] = try await pipeline.render(response.data, as: ImageRequest(url: checked)) } catch { throw ServiceError(error) }
        }
        return images
    }

    /// The image part as thumbor's /meta reports it: decoded, then escaped
    /// again, slashes kept (Python's `quote`).
    static func thumborImageURL(_ image: Substring) -> String {
        var kept = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        kept.insert(charactersIn: "_.-~/")
        let decoded = String(image).removingPercentEncoding ?? String(image)
        return decoded.addingPercentEncoding(withAllowedCharacters: kept) ?? decoded
    }

    /// The size an SVG source is rendered at for a thumbor URL, as thumbor
    /// asks CairoSVG for the URL's width and height (a side of 0, or
    /// `orig`, free; both free, the document's own size): filled for a
    /// crop and for `full-fit-in` and `adaptive-fit-in`, fitted for
    /// `fit-in`, so that the layout has the pixels it keeps without
    /// enlarging a small render. (CairoSVG fits the document inside the
    /// box, with margins where the ratios differ; Imago does not.)
    static func thumborRenderSize(_ path: ThumborPath) -> (ImageSize?, ContentMode) {
        func side(_ side: ThumborPath.Side) -> Int {
            guard case .pixels(let pixels) = side else { return 0 }
            return pixels == .min ? 0 : abs(pixels)
        }
        let size = ImageSize(width: side(path.width), height: side(path.height))
        guard size.width > 0 || size.height > 0 else { return (nil, .fill) }
        let fits = path.fitIn.map { !$0.isFull && !$0.isAdaptive } ?? false
        return (size, fits ? .fit : .fill)
    }

    /// Decodes `data` whole, lays it out with `processor` and encodes it as
    /// the URL's filters say: the source's format unless `format()` names
    /// one, quality 80 unless `quality()` does, an RGB ICC profile kept
    /// with the pixels as stored, as thumbor keeps it, unless `strip_icc()`
    /// (then the colours are converted to sRGB, which thumbor does not do),
    /// no EXIF (thumbor writes none by default); an animation animated
    /// where the format animates.
    func transform(_ data: Data, of url: URL, thumbor processor: ThumborProcessor, settings: ThumborAnswerSettings) async throws(ServiceError)
        -> (Data, mediaType: String)
    {
        let format = try settings.outputFormat(source: ImageFormat(sniffing: data))
        let quality = settings.quality ?? configuration.quality
        let read = settings.stripsProfile ? ImageMetadata() : ImageMetadata(reading: data)
        let metadata = ImageMetadata(iccProfile: read.hasRGBProfile ? read.iccProfile : nil)
        let encoder: any ImageEncoding =
            settings.maximumBytes > 0
            ? FittingEncoder(quality: quality, maximumBytes: settings.maximumBytes) { format.encoder(quality: $0, metadata: metadata) }
            : format.encoder(quality: quality, metadata: metadata)
        var request = ImageRequest(url: url, processors: [processor])
        request.convertsToSRGB = metadata.iccProfile == nil
        if ImageFormat(sniffing: data) == .svg { (request.targetSize, request.contentMode) = Self.thumborRenderSize(processor.path) }
        // Animated as thumbor answers a GIF (which it resizes with
        // gifsicle), every frame laid out and filtered alike.
        let animated = settings.maximumBytes > 0 ? nil : format.animatedEncoder(quality: quality, metadata: metadata)
        if animated != nil { try checkAnimation(ImageHeader(data), options: ProcessingOptions(), frameLimit: configuration.maximumFrameCount) }
        return try await render(data, as: request, encodedWith: encoder, animatingWith: animated, maximumFrameCount: configuration.maximumFrameCount)
    }
}
