import Foundation
import Imago

extension ProcessingOptions {
    /// The pipeline request that makes these options' image from `url`:
    /// decoded scaled toward the box, then the processors in a fixed order
    /// (crop, gray, blur, rounded corners).
    func imageRequest(for url: URL) -> ImageRequest {
        var targetSize: ImageSize?
        var contentMode = ContentMode.fit
        var processors: [any ImageProcessing] = []
        if width > 0 || height > 0 {
            let box = ImageSize(
                width: width > 0 ? width : Bounds.side.upperBound,
                height: height > 0 ? height : Bounds.side.upperBound
            )
            targetSize = box
            if width > 0, height > 0, fit != .fit {
                contentMode = .fill
                if fit == .crop { processors.append(.resize(to: box, contentMode: .fill, crop: true)) }
            }
        }
        if grayscale { processors.append(.grayscale) }
        if blur > 0 { processors.append(.gaussianBlur(radius: Double(blur))) }
        if cornerRadius > 0 { processors.append(.roundedCorners(radius: Double(cornerRadius))) }
        return ImageRequest(url: url, targetSize: targetSize, contentMode: contentMode, processors: processors)
    }
}
