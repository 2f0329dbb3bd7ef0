import Imago

/// A small RGB drawing surface for generated test images. Drawing works in
/// horizontal spans copied with memory operations, so that even a debug
/// build paints a 2400x1800 picture in milliseconds.
public struct Canvas {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    private var pixels: [UInt8]

    /// A canvas filled with `background` (red, green, blue).
    public init(width: Int, height: Int, background: (UInt8, UInt8, UInt8)) {
        self.width = max(1, width)
        self.height = max(1, height)
        pixels = [UInt8](repeating: 0, count: self.width * self.height * 3)
        for y in 0..<self.height { fillSpan(y: y, from: 0, to: self.width, color: background) }
    }

    /// Fills a rectangle, clipped to the canvas.
    public mutating func fillRect(x: Int, y: Int, width: Int, height: Int, color: (UInt8, UInt8, UInt8)) {
        for row in max(0, y)..<min(self.height, y + height) {
            fillSpan(y: row, from: x, to: x + width, color: color)
        }
    }

    /// Fills a disc, clipped to the canvas.
    public mutating func fillCircle(centerX: Int, centerY: Int, radius: Int, color: (UInt8, UInt8, UInt8)) {
        guard radius > 0 else { return }
        for row in max(0, centerY - radius)..<min(height, centerY + radius + 1) {
            let dy = row - centerY
            var half = 0
            while (half + 1) * (half + 1) + dy * dy <= radius * radius { half += 1 }
            fillSpan(y: row, from: centerX - half, to: centerX + half + 1, color: color)
        }
    }

    /// Fills rows with a vertical gradient from `top` to `bottom`.
    public mutating func fillVerticalGradient(top: (UInt8, UInt8, UInt8), bottom: (UInt8, UInt8, UInt8)) {
        func mix(_ a: UInt8, _ b: UInt8, _ t: Int) -> UInt8 {
            UInt8((Int(a) * (height - t) + Int(b) * t) / height)
        }
        for y in 0..<height {
            fillSpan(y: y, from: 0, to: width, color: (mix(top.0, bottom.0, y), mix(top.1, bottom.1, y), mix(top.2, bottom.2, y)))
        }
    }

    /// The canvas as an RGB image.
    public var image: Image? {
        Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    private mutating func fillSpan(y: Int, from start: Int, to end: Int, color: (UInt8, UInt8, UInt8)) {
        let x0 = max(0, start)
        let x1 = min(width, end)
        guard x0 < x1 else { return }
        pixels.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            let row = base + (y * width + x0) * 3
            row.storeBytes(of: color.0, as: UInt8.self)
            (row + 1).storeBytes(of: color.1, as: UInt8.self)
            (row + 2).storeBytes(of: color.2, as: UInt8.self)
            // Double the painted run until the span is full.
            var filled = 3
            let total = (x1 - x0) * 3
            while filled < total {
                let chunk = min(filled, total - filled)
                (row + filled).copyMemory(from: row, byteCount: chunk)
                filled += chunk
            }
        }
    }
}
