import Foundation

extension ImageProcessors {
    /// Turned clockwise by `quarterTurns` * 90 degrees: any integer, taken
    /// modulo 4, so negative turns go counter-clockwise (-1 is 3). A whole
    /// number of turns returns the image itself; otherwise the result has
    /// no animation (one frame is turned).
    ///
    /// ```swift
    /// let portrait = ImageProcessors.Rotate(quarterTurns: 1).process(landscape)
    /// ```
    public struct Rotate: ImageProcessing, Hashable {
        /// Clockwise quarter turns; only `quarterTurns` modulo 4 matters.
        public var quarterTurns: Int

        /// Creates a rotation by `quarterTurns` clockwise quarter turns.
        public init(quarterTurns: Int) {
            self.quarterTurns = quarterTurns
        }

        /// The turns modulo 4, in 0...3: `rotate(1)` for 1, 5 and -3 alike,
        /// since they make the same pixels.
        public var identifier: String { "rotate(\(normalizedTurns))" }

        /// `quarterTurns` in 0...3 (no overflow for `Int.min`: its remainder is 0).
        var normalizedTurns: Int { (quarterTurns % 4 + 4) % 4 }

        public func process(_ image: Image) -> Image? {
            let orientation: ImageOrientation
            switch normalizedTurns {
            case 1: orientation = .right
            case 2: orientation = .down
            case 3: orientation = .left
            default: return image
            }
            // The EXIF transforms are these turns: `.right` is shown after a
            // clockwise quarter turn, `.left` after a counter-clockwise one.
            var turned = orientation.apply(to: image)
            turned.animation = nil
            return turned
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Rotate {
    /// Turns clockwise by `quarterTurns` quarter turns (negative: counter-clockwise).
    public static func rotate(quarterTurns: Int) -> Self { ImageProcessors.Rotate(quarterTurns: quarterTurns) }
}
