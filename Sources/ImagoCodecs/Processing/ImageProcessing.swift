import Foundation

/// Turns one image into another: resize, crop, round, blur, gray...
///
/// ```swift
/// var request = ImageRequest(url: url)
/// request.processors = [.resize(to: ImageSize(width: 120, height: 120), crop: true), .circle()]
/// ```
///
/// Processors run on the pipeline's decode threads, after decoding, in
/// order. Their ``identifier``s are part of the cache key, in memory and on
/// disk, and requests with the same key share one piece of work, so two
/// processors with the same identifier must produce the same pixels.
public protocol ImageProcessing: Sendable {
    /// A stable description of what the processor does and with which
    /// parameters, for cache keys: `"resize(120x120,fill,crop)"`.
    var identifier: String { get }

    /// The processed image, or `nil` if this image cannot be processed.
    func process(_ image: Image) -> Image?
}

/// The built-in processors; see the leading-dot factories on ``ImageProcessing``.
public enum ImageProcessors {}
