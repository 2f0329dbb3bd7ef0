import Foundation
import Hummingbird
import Imago
import ImagoConcurrency

extension ImageService {
    /// What `/info/{signature}/{options}/{source}` answers, as JSON: the
    /// source's size (turned upright), format, bytes, alpha, frames, EXIF
    /// orientation, and a ThumbHash placeholder to show while the image loads.
    struct ImageInfo: Codable, Equatable {
        var width: Int
        var height: Int
        var format: String
        var bytes: Int
        var alpha: Bool
        var frames: Int
        var orientation: Int
        var thumbhash: String
    }

    /// The `/info` route: signed and checked like an image URL (its options
    /// are read, and refused if malformed, but change nothing), answered
    /// from the result cache like an image.
    func info(_ request: Request, path rawPath: Substring, mountedAt prefix: Substring, report: ImageRequestReport?)
        async throws(ServiceError) -> Response
    {
        let (read, source) = try readRequest(rawPath, mountedAt: prefix, report: report)
        let key = ResultKey(source: source, options: "info")
        let result = try await result(for: key, source: source, forwarding: request, report: report, production: .info)
        return answer(result, to: request, delivery: read.options.delivery(negotiated: false), source: source)
    }

    /// The source's info: its header for the size where it is read here,
    /// and a decode toward 100x100 (the ThumbHash's input) for the rest.
    func describe(_ data: Data, of url: URL) async throws(ServiceError) -> Data {
        let header = ImageHeader(data)
        let probe = SizeProbe()
        var request = ImageRequest(url: url, processors: [probe])
        if header.uprightSize != nil {
            request.targetSize = ImageSize(width: 100, height: 100)
            request.contentMode = .fit
        }
        let thumbnail: Image
        do { thumbnail = try await pipeline.render(data, as: request) } catch { throw ServiceError(error) }
        let size = header.uprightSize ?? probe.decodedSize ?? thumbnail.size
        let info = ImageInfo(
            width: size.width, height: size.height, format: header.format.rawValue, bytes: data.count, alpha: thumbnail.pixelFormat.hasAlpha,
            frames: thumbnail.animation?.frameCount ?? 1, orientation: header.orientation.rawValue, thumbhash: ThumbHash.base64(of: thumbnail)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(info)) ?? Data("{}".utf8)
    }
}

/// Notes the size an image was decoded at and shrinks it to fit 100x100
/// (ThumbHash's input), on the decode thread: for formats whose header
/// Imago does not read, the decode at full size is how their size is known.
private final class SizeProbe: ImageProcessing, Sendable {
    private let size = Locked<ImageSize?>(nil)

    var decodedSize: ImageSize? { size.withLock { $0 } }

    var identifier: String { "infoProbe" }

    func process(_ image: Image) -> Image? {
        size.withLock { $0 = image.size }
        return ImageDecodingOptions(targetSize: ImageSize(width: 100, height: 100), contentMode: .fit).scaled(image)
    }
}
