// TEMPORARY: replaced by the real processors when their branches merge.
extension ImageProcessors {
    public struct Embed: ImageProcessing, Hashable {
        public var size: ImageSize, x: Int, y: Int, background: Color
        public init(size: ImageSize, x: Int, y: Int, background: Color = .transparent) { (self.size, self.x, self.y, self.background) = (size, x, y, background) }
        public var identifier: String { "" }
        public func process(_ image: Image) -> Image? { image }
    }
    public struct Flatten: ImageProcessing, Hashable {
        public var background: Color
        public init(background: Color) { self.background = background }
        public var identifier: String { "" }
        public func process(_ image: Image) -> Image? { image }
    }
    public struct Rotate: ImageProcessing, Hashable {
        public var quarterTurns: Int
        public init(quarterTurns: Int) { self.quarterTurns = quarterTurns }
        public var identifier: String { "" }
        public func process(_ image: Image) -> Image? { image }
    }
    public struct Flip: ImageProcessing, Hashable {
        public var horizontal: Bool, vertical: Bool
        public init(horizontal: Bool, vertical: Bool) { (self.horizontal, self.vertical) = (horizontal, vertical) }
        public var identifier: String { "" }
        public func process(_ image: Image) -> Image? { image }
    }
    public struct Sharpen: ImageProcessing, Hashable {
        public var sigma: Double
        public init(sigma: Double) { self.sigma = sigma }
        public var identifier: String { "" }
        public func process(_ image: Image) -> Image? { image }
    }
    public struct Pixelate: ImageProcessing, Hashable {
        public var size: Int
        public init(size: Int) { self.size = size }
        public var identifier: String { "" }
        public func process(_ image: Image) -> Image? { image }
    }
    public struct Overlay: ImageProcessing {
        public init(_ overlay: Image, named name: String, x: Int, y: Int, opacity: Double = 1, repeating: Bool = false) {}
        public var identifier: String { "" }
        public func process(_ image: Image) -> Image? { image }
    }
    public struct SmartCrop: ImageProcessing, Hashable {
        public var size: ImageSize
        public init(size: ImageSize) { self.size = size }
        public var identifier: String { "" }
        public func process(_ image: Image) -> Image? { image }
    }
}
public enum Saliency {
    public static func bestCrop(in image: Image, width: Int, height: Int) -> (x: Int, y: Int) { (0, 0) }
}
extension Image {
    public func trimmedBounds(threshold: Double, background: Color?, equalHorizontal: Bool, equalVertical: Bool) -> (x: Int, y: Int, width: Int, height: Int)? { nil }
}
public enum ThumbHash {
    public static func base64(of image: Image) -> String { "" }
    public static func hash(of image: Image) -> [UInt8] { [] }
    public static func image(from hash: [UInt8]) -> Image? { nil }
    public static func averageColor(of hash: [UInt8]) -> (red: Double, green: Double, blue: Double, alpha: Double)? { nil }
    public static func approximateAspectRatio(of hash: [UInt8]) -> Double? { nil }
}
