extension ImageProcessors {
    /// Cuts the image to `size` around its most salient region (``Saliency``); an image already within the size is returned as is.
    ///
    /// A side already within the size is kept whole: a 300x200 image cut to 100x400 becomes
    /// 100x200. `nil` for an empty size, as ``Resize`` gives.
    public struct SmartCrop: ImageProcessing, Hashable {
        /// The largest size the result may have.
        public var size: ImageSize

        /// A smart crop to `size`.
        public init(size: ImageSize) {
            self.size = size
        }

        /// `"smartCrop(WxH)"`.
        public var identifier: String { "smartCrop(\(size))" }

        /// The window of ``size`` (clamped to the image) that ``Saliency`` finds most interesting.
        public func process(_ image: Image) -> Image? {
            guard size.width > 0, size.height > 0 else { return nil }
            let width = min(size.width, image.width)
            let height = min(size.height, image.height)
            if width == image.width && height == image.height { return image }
            let corner = Saliency.bestCrop(in: image, width: width, height: height)
            return Crop(x: corner.x, y: corner.y, width: width, height: height).process(image)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.SmartCrop {
    /// Cuts the image to `size` around its most salient region.
    public static func smartCrop(to size: ImageSize) -> Self { ImageProcessors.SmartCrop(size: size) }
}
