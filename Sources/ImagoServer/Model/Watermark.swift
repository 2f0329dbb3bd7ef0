import Crypto
import Foundation
import Imago
import ImagoCaching
import ImagoConcurrency

/// Where `wm`'s image comes from, as the operator configures it.
public enum WatermarkSource: Sendable, Equatable {
    /// A file read at start (`--watermark-path`).
    case file(String)
    /// A URL fetched, under the source policy, when a URL first asks for a
    /// watermark, and kept (`--watermark-url`).
    case url(String)
}

extension WatermarkSource {
    /// Whether the source can work: a file that reads as an image, or an http(s) URL.
    func validate() throws(ConfigurationError) {
        switch self {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path), ImageFormat(sniffing: data) != .unknown else {
                throw ConfigurationError("watermark \(path): not a readable image file")
            }
        case .url(let text):
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased()) else {
                throw ConfigurationError("watermark URL \(text): expected an http or https URL")
            }
        }
    }
}

/// The operator's watermark, decoded once and kept.
final class Watermark: Sendable {
    let source: WatermarkSource
    /// Part of the result cache's key for answers with a watermark: the
    /// file's digest, or the URL.
    let key: String
    private let fileData: Data?
    private let decoded = Locked<Image?>(nil)

    /// Reads a file source at once (``ImageService/Configuration/validate()``
    /// has checked that it is an image).
    init(_ source: WatermarkSource) {
        self.source = source
        switch source {
        case .file(let path):
            let data = FileManager.default.contents(atPath: path) ?? Data()
            fileData = data
            key = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
        case .url(let url):
            fileData = nil
            key = url
        }
    }

    /// The watermark's pixels, decoded on first use with `pipeline`.
    func image(using pipeline: ImagePipeline, policy: SourcePolicy) async throws(ServiceError) -> Image {
        if let image = decoded.withLock({ $0 }) { return image }
        let data: Data
        let url: URL
        switch source {
        case .file(let path):
            data = fileData ?? Data()
            url = URL(fileURLWithPath: path)
        case .url(let text):
            do { url = try policy.check(url: text) } catch { throw ServiceError(error) }
            let response: DataResponse
            do { response = try await pipeline.data(for: ImageRequest(url: url)) } catch { throw ServiceError(error) }
            guard (200..<300).contains(response.statusCode) else {
                throw ServiceError(ImagePipeline.Error.httpStatus(code: response.statusCode, url: url))
            }
            data = response.data
        }
        let image: Image
        do { image = try await pipeline.render(data, as: ImageRequest(url: url)) } catch { throw ServiceError(error) }
        decoded.withLock { $0 = image }
        return image
    }
}
