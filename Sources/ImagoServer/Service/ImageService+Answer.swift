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
    /// `filename*`. Byte by byte, without Foundation's string searches,
    /// which are slow on Linux: it runs for every answer.
    static func contentDisposition(options: ProcessingOptions, source: URL, mediaType: String) -> String {
        var name = options.filename ?? ""
        if name.isEmpty { name = baseName(of: source.path) }
        if name.isEmpty { name = "image" }
        let subtype = mediaType.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(mediaType[mediaType.index(after: $0)...]) } ?? ""
        let format = ImageFormat(rawValue: subtype).flatMap { $0 == .unknown ? nil : $0 }
        let fileName = name + (format.map { "." + $0.fileExtension } ?? "")
        let disposition = options.returnAttachment ? "attachment" : "inline"
        var quoted = ""
        var isPlain = true
        for scalar in fileName.unicodeScalars {
            switch scalar.value {
            case 0x22: quoted += "%22"
            case 0x5C: quoted += "%5C"
            case 0x20..<0x7F: quoted.unicodeScalars.append(scalar)
            default:
                quoted += "_"
                isPlain = false
            }
        }
        guard !isPlain else { return "\(disposition); filename=\"\(quoted)\"" }
        var encoded = ""
        for byte in fileName.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where "!#$&+-.^_`|~".utf8.contains(byte): encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default: encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
            }
        }
        return "\(disposition); filename=\"\(quoted)\"; filename*=UTF-8''\(encoded)"
    }

    /// The last segment of `path` without its extension (`/a/b.c.jpg`: `b.c`).
    static func baseName(of path: String) -> String {
        let bytes = path.utf8
        let start = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes.index(after: $0) } ?? bytes.startIndex
        var end = bytes.endIndex
        if let dot = bytes[start...].lastIndex(of: UInt8(ascii: ".")), dot > start { end = dot }
        return String(path[start..<end])
    }
}
