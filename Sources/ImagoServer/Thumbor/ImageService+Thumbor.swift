import Foundation
import HTTPTypes
import Hummingbird
import Imago

extension ImageService {
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
        let processor = ThumborProcessor(path: thumbor, filters: filters)
        let key = ResultKey(source: source, options: processor.identifier)
        let production = thumbor.isMeta ? Production.thumborMeta(processor, imageURL: Self.thumborImageURL(thumbor.image)) : .thumbor(processor)
        let result = try await result(for: key, source: source, forwarding: request, report: report, production: production)
        return answer(result, to: request, delivery: processor.delivery(now: Int(Date().timeIntervalSince1970)), source: source)
    }

    /// The images the URL's `watermark()` and `frame()` filters name, read
    /// as its image part is (so under the source policy, through the source
    /// cache), and decoded: thumbor loads them with the same loader.
    func thumborWatermarks(_ filters: [ThumborFilter], dialect: ThumborDialect) async throws(ServiceError) -> [String: Image] {
        var images: [String: Image] = [:]
        let named = filters.compactMap { filter -> String? in
            switch filter {
            case .watermark(let url, _, _, _, _, _), .frame(let url): url
            default: nil
            }
        }
        for text in named where images[text] == nil {
            guard let url = dialect.sourceURL(for: Substring(text)) else { throw ServiceError(.badRequest, "the image \(text) names no source") }
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
}
