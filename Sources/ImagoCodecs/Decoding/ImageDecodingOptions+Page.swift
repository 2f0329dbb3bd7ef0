import Foundation

extension ImageDecodingOptions {
    /// `image`, as a decoder of `format` returned it for these options,
    /// narrowed to ``page``: frame `page` of an animation, composited onto
    /// the frames before it as the format prescribes, as a still; `image`
    /// itself for page 0, or when the decoder picks pages itself (TIFF). A
    /// still image has only page 0.
    public func selectingPage(of image: Image, format: ImageFormat) throws(ImageDecodingError) -> Image {
        guard page != 0, format != .tiff else { return image }
        func missing(_ detail: String) -> ImageDecodingError {
            ImageDecodingError(code: .noSuchPage(page: page), format: format, detail: detail)
        }
        guard page > 0 else { throw missing("pages count from 0") }
        guard let animation = image.animation else { throw missing("a still image has one page") }
        guard page < animation.frameCount else { throw missing("the animation has \(animation.frameCount) frames") }
        let frames = try animation.frames()
        var frame: Image?
        for _ in 0...page { frame = try frames.next() }
        guard var still = frame else { throw missing("the animation ends early") }
        still.animation = nil
        return still
    }
}
