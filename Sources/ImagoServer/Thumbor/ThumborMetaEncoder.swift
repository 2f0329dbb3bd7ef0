import Foundation
import ImagoCodecs

/// thumbor's `/meta` answer, made where an encoder runs (on the decode
/// thread, right after the decode): the URL's transformation is run on the
/// decoded image, and what it did is written as thumbor's JSON, not the
/// pixels.
///
///     {"thumbor": {"source": {"url": …, "width": …, "height": …, "frameCount": 1},
///      "operations": [{"type": "crop", …}, {"type": "resize", …}, {"type": "flip_horizontally"}],
///      "target": {"width": …, "height": …}, "focal_points": [{"x": …, "y": …, "z": …, …}]}}
///
/// As in thumbor, `source` gives the size the answer would have (filters
/// included), and `target` the size of the last crop or resize. Numbers
/// are written as integers (thumbor writes the ones taken from the URL
/// as `300.0`).
struct ThumborMetaEncoder: ImageEncoding {
    let processor: ThumborProcessor
    /// The image part as thumbor reports it: decoded, then escaped again.
    let imageURL: String

    var format: ImageFormat { .unknown }

    func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        guard let run = processor.run(image) else { throw ImageEncodingError(format: .unknown, detail: "the thumbor transformation failed") }
        let operations = run.operations
        var objects = operations.map(Self.json)
        if !processor.path.isDebug, processor.path.flipsHorizontally { objects.append(#"{"type": "flip_horizontally"}"#) }
        if !processor.path.isDebug, processor.path.flipsVertically { objects.append(#"{"type": "flip_vertically"}"#) }
        // The last resize's size, else the last crop's, else the image's.
        var target = processor.path.isDebug ? (run.image.width, run.image.height) : (run.plan.size.width, run.plan.size.height)
        for operation in operations {
            if case .crop(let left, let top, let right, let bottom) = operation { target = (right - left, bottom - top) }
        }
        for operation in operations {
            if case .resize(let width, let height) = operation { target = (width, height) }
        }
        let points = run.plan.focalPoints.map { point in
            let weight = point.isExplicit ? String(Int(point.weight)) : "1.0"
            let origin = point.isExplicit ? "Explicit" : "alignment"
            return
                #"{"x": \#(point.x), "y": \#(point.y), "z": \#(weight), "height": \#(point.height), "width": \#(point.width), "origin": "\#(origin)"}"#
        }
        let json =
            #"{"thumbor": {"source": {"url": "\#(Self.escaped(imageURL))", "width": \#(run.image.width), "height": \#(run.image.height), "frameCount": 1}, "#
            + #""operations": [\#(objects.joined(separator: ", "))], "target": {"width": \#(target.0), "height": \#(target.1)}, "#
            + #""focal_points": [\#(points.joined(separator: ", "))]}}"#
        return Data(json.utf8)
    }

    private static func json(_ operation: ThumborPlan.Operation) -> String {
        switch operation {
        case .crop(let left, let top, let right, let bottom):
            #"{"type": "crop", "left": \#(left), "top": \#(top), "right": \#(right), "bottom": \#(bottom)}"#
        case .resize(let width, let height): #"{"type": "resize", "width": \#(width), "height": \#(height)}"#
        }
    }

    /// `text` as a JSON string's contents.
    private static func escaped(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case _ where scalar.value < 0x20: output += String(format: "\\u%04x", scalar.value)
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
