import Foundation
import HTTPTypes
import Hummingbird
import Imago

extension ImageService {
    /// The Content-Security-Policy of every answer, fit for an image: an
    /// SVG opened on its own (a `raw` source of any type, too) runs no
    /// script, fetches nothing, submits nothing and has an origin of its
    /// own; its inline styles and image data URLs still apply.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"

    /// The answer to `request` from `result`: 304 when the client's copy is
    /// current, else the bytes, shared with every other answer. Its fields
    /// are imgproxy's: Content-Disposition with the file name (`fn`, else
    /// the source's) and `att`'s disposition, a max-age no later than
    /// `exp`, `Vary: Accept` when the format was `negotiated` and the
    /// fields forwarded to sources, and ``contentSecurityPolicy``.
    func answer(_ result: EncodedResult, to request: Request, delivery: Delivery, source: URL) -> Response {
        var maxAge = result.maxAge
        if let expires = delivery.expires, expires > 0 {
            maxAge = min(maxAge, max(0, expires - Int(Date().timeIntervalSince1970)))
        }
        var headers: HTTPFields = [
            .contentType: result.mediaType,
            .cacheControl: "public, max-age=\(maxAge)",
            .eTag: result.etag,
            .contentDisposition: Self.contentDisposition(delivery, source: source, mediaType: result.mediaType),
            .contentSecurityPolicy: Self.contentSecurityPolicy,
        ]
        if let lastModified = result.lastModified { headers[.lastModified] = lastModified }
        let varying = (delivery.negotiated ? ["Accept"] : []) + configuration.forwardedHeaders.map(\.rawName)
        if !varying.isEmpty { headers[.vary] = varying.joined(separator: ", ") }
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
    static func contentDisposition(_ delivery: Delivery, source: URL, mediaType: String) -> String {
        var name = delivery.filename ?? ""
        if name.isEmpty { name = baseName(of: source.absoluteString) }
        if name.isEmpty { name = "image" }
        let fileName = name + Self.fileExtension(of: mediaType)
        let disposition = delivery.attachment ? "attachment" : "inline"
        // Most names are printable ASCII without quotes: nothing to change.
        if fileName.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) {
            return disposition + "; filename=\"" + fileName + "\""
        }
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

    /// The file extension of an answer's media type, with its dot; none
    /// for a type that is not an image format Imago knows.
    static func fileExtension(of mediaType: String) -> String {
        switch mediaType {
        case "image/jpeg": ".jpg"
        case "image/png": ".png"
        case "image/webp": ".webp"
        case "image/avif": ".avif"
        case "image/svg+xml": ".svg"
        default: ImageFormat(mediaType: mediaType).map { "." + $0.fileExtension } ?? ""
        }
    }

    /// The last segment of `url`'s path without its extension, decoded
    /// (`http://h/a/b%20c.jpg?x=1`: `b c`); empty for a URL without one.
    static func baseName(of url: String) -> String {
        let bytes = url.utf8
        // The path ends where the query or the fragment starts; it starts after the authority.
        let pathEnd = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        let scheme = bytes.firstIndex(of: UInt8(ascii: ":")).map { bytes.index(after: $0) } ?? bytes.startIndex
        var authorityEnd = scheme
        if bytes[scheme...].starts(with: "//".utf8) {
            let host = bytes.index(scheme, offsetBy: 2)
            authorityEnd = bytes[host..<pathEnd].firstIndex(of: UInt8(ascii: "/")) ?? pathEnd
        }
        let start = bytes[authorityEnd..<pathEnd].lastIndex(of: UInt8(ascii: "/")).map { bytes.index(after: $0) } ?? pathEnd
        var end = pathEnd
        if let dot = bytes[start..<pathEnd].lastIndex(of: UInt8(ascii: ".")), dot > start { end = dot }
        let name = String(url[start..<end])
        return name.utf8.contains(UInt8(ascii: "%")) ? ImageURLPath.percentDecoded(name) ?? name : name
    }
}
