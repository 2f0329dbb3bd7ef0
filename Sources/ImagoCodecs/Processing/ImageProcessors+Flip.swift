import Foundation

extension ImageProcessors {
    /// Mirrored left-right (`horizontal`) and/or top-bottom (`vertical`);
    /// both is a half turn. Neither returns the image itself; otherwise the
    /// result has no animation (one frame is mirrored).
    public struct Flip: ImageProcessing, Hashable {
        /// Whether left and right swap.
        public var horizontal: Bool
        /// Whether top and bottom swap.
        public var vertical: Bool

        /// Creates a mirroring along either axis or both.
        public init(horizontal: Bool, vertical: Bool) {
            self.horizontal = horizontal
            self.vertical = vertical
        }

        /// `flip(horizontal)`, `flip(vertical)`, `flip(horizontal,vertical)`, or `flip()` for neither.
        public var identifier: String {
            "flip(" + [horizontal ? "horizontal" : nil, vertical ? "vertical" : nil].compactMap { $0 }.joined(separator: ",") + ")"
        }

        public func process(_ image: Image) -> Image? {
            let orientation: ImageOrientation
            switch (horizontal, vertical) {
            case (true, false): orientation = .upMirrored
            case (false, true): orientation = .downMirrored
            case (true, true): orientation = .down
            case (false, false): return image
            }
            var mirrored = orientation.apply(to: image)
            mirrored.animation = nil
            return mirrored
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Flip {
    /// Mirrors left-right and/or top-bottom.
    public static func flip(horizontal: Bool = false, vertical: Bool = false) -> Self {
        ImageProcessors.Flip(horizontal: horizontal, vertical: vertical)
    }
}
