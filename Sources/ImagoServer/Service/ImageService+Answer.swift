import Foundation
import HTTPTypes
import Hummingbird
import Imago

extension ImageService {
    /// The answer to `request` from `result`: 304 when the client's copy is
    /// current, else the bytes, shared with every other answer. Its fields
    /// are imgproxy's: Content-Disposition with the file name (`fn`, else
    /// the source's) and `att`'s disposition, a max-age no later than
    /// `exp`, and `Vary: Accept` when the format was `negotiated`.
    func answer(_ result: EncodedResult, to request: Request, options: ProcessingOptions, source: URL, negotiated: Bool) -> Response {
        var maxAge = result.maxAge
        if let expires = options.expires, expires > 0 {
            maxAge = min(maxAge, max(0, expires - Int(Date().timeIntervalSince1970)))
        }
        var headers: HTTPFields = [
            .contentType: result.mediaType,
            .cacheControl: "public, max-age=\(maxAge)",
            .eTag: result.etag,
            .contentDisposition: Self.contentDisposition(options: options, source: source, mediaType: result.mediaType),
        ]
        if let lastModified = result.lastModified { headers[.lastModified] = lastModified }
        if negotiated { headers[.vary] = "Accept" }
        if ConditionalRequest(request.headers).isCurrent(etag: result.etag, lastModified: result.lastModified) {
            return Response(status: .notModified, headers: headers, body: ResponseBody())
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: result.bytes))
    }

    /// `inline` (or `attachment` for `att`) with the file name: `fn`'s, else
    /// the source path's last segment without its extension, else `image`,
    /// then the answer's extension. Quotes become `%22` as imgproxy writes
    /// them; a name beyond printable ASCII is also given as RFC 8187's
    /// `filename*`.
    static func contentDisposition(options: ProcessingOptions, source: URL, mediaType: String) -> String {
        var name = options.filename ?? ""
        if name.isEmpty {
            let last = source.lastPathComponent
            name = last == "/" ? "" : (last as NSString).deletingPathExtension
        }
        if name.isEmpty { name = "image" }
        let format = mediaType.split(separator: "/").last.flatMap { ImageFormat(rawValue: String($0)) }.flatMap { $0 == .unknown ? nil : $0 }
        let fileName = name + (format.map { "." + $0.fileExtension } ?? "")
        let disposition = options.returnAttachment ? "attachment" : "inline"
        let isPlain = fileName.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        let quoted = String(fileName.unicodeScalars.map { isPlain || $0.isASCII && $0.value >= 0x20 ? Character($0) : "_" })
            .replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\\", with: "%5C")
        guard !isPlain else { return "\(disposition); filename=\"\(quoted)\"" }
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(0x7F)))
        allowed.insert(charactersIn: "!#$&+-.^_`|~")
        let encoded = fileName.addingPercentEncoding(withAllowedCharacters: allowed) ?? "image"
        return "\(disposition); filename=\"\(quoted)\"; filename*=UTF-8''\(encoded)"
    }
}
