/// Anything that shows an image: a view, a cell, a layer, a terminal cell.
///
/// Conform a UI type and let an ``ImageBinder`` drive it:
///
/// ```swift
/// final class Thumbnail: ImageDisplaying {
///     func display(_ content: ImageDisplayContent) {
///         switch content {
///         case .placeholder(let image): show(image, animated: false)
///         case .image(let image, let source): show(image, animated: source != .memory)
///         case .failure(let image, _): show(image, animated: false)
///         }
///     }
/// }
/// ```
@MainActor
public protocol ImageDisplaying: AnyObject {
    /// Shows `content`, replacing whatever was shown.
    func display(_ content: ImageDisplayContent)
}

/// What an ``ImageDisplaying`` is asked to show.
public enum ImageDisplayContent: Sendable {
    /// The load has started (or there is nothing to load): show the placeholder, if any.
    case placeholder(Image?)
    /// The loaded image. `source` is `.memory` when it was shown synchronously
    /// from the memory cache: a UI fades in only the others, so that cached
    /// images appear without a flicker.
    case image(Image, source: ImageResponse.Source)
    /// The load failed: show the failure image, if any.
    case failure(Image?, ImagePipeline.Error)
}
