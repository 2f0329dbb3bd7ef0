import Foundation

extension Image.PixelFormat {
    /// Whether the format carries red, green and blue (not one gray channel).
    var hasColor: Bool { bytesPerPixel >= 3 }

    /// This format with colour and/or alpha added where it lacks them:
    /// never loses a channel, so every pixel of `self` has a place in it.
    func adding(color: Bool, alpha: Bool) -> Image.PixelFormat {
        switch (color || hasColor, alpha || hasAlpha) {
        case (false, false): .gray8
        case (false, true): .grayAlpha8
        case (true, false): .rgb8
        case (true, true): .rgba8
        }
    }

    /// Copies `count` pixels of this format from `source` to `target` in
    /// `adding(color:alpha:)`'s format: gray spread over red, green and
    /// blue, opaque alpha where the source has none. The target format is
    /// derived here, not passed in, so it always has room for every channel.
    func widen(
        _ source: UnsafePointer<UInt8>, into target: UnsafeMutablePointer<UInt8>, count: Int, addingColor: Bool, addingAlpha: Bool
    ) {
        let output = adding(color: addingColor, alpha: addingAlpha)
        let channels = bytesPerPixel
        if output == self {
            target.initialize(from: source, count: count * channels)
            return
        }
        // Each pair gets a loop of its own, with constant channel counts.
        switch (self, output) {
        case (.gray8, .grayAlpha8): Self.widen(source, target, count, from: 1, to: 2, spread: false, alpha: false)
        case (.gray8, .rgb8): Self.widen(source, target, count, from: 1, to: 3, spread: true, alpha: false)
        case (.gray8, .rgba8): Self.widen(source, target, count, from: 1, to: 4, spread: true, alpha: false)
        case (.grayAlpha8, .rgba8): Self.widen(source, target, count, from: 2, to: 4, spread: true, alpha: true)
        default: Self.widen(source, target, count, from: 3, to: 4, spread: false, alpha: false)  // rgb8 to rgba8, the last widening
        }
    }

    @inline(__always)
    private static func widen(
        _ source: UnsafePointer<UInt8>, _ target: UnsafeMutablePointer<UInt8>, _ count: Int, from: Int, to: Int, spread: Bool, alpha: Bool
    ) {
        let colors = spread ? 3 : (to >= 3 ? 3 : 1)
        for pixel in 0..<count {
            let input = source + pixel * from
            let output = target + pixel * to
            if spread {
                output[0] = input[0]
                output[1] = input[0]
                output[2] = input[0]
            } else {
                for channel in 0..<colors { output[channel] = input[channel] }
            }
            if to > colors { output[colors] = alpha ? input[from - 1] : 255 }
        }
    }
}

extension Image {
    /// The same pixels with colour and/or alpha channels added where the
    /// format lacks them (see ``PixelFormat/adding(color:alpha:)``), in rows
    /// without padding; the image itself when nothing is added.
    func widened(addingColor: Bool, addingAlpha: Bool) -> Image {
        let output = pixelFormat.adding(color: addingColor, alpha: addingAlpha)
        guard output != pixelFormat else { return self }
        let rowBytes = width * output.bytesPerPixel
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { target, initialized in
            self.pixels.withUnsafeBufferPointer { source in
                guard let source = source.baseAddress, let target = target.baseAddress else { return }
                for y in 0..<height {
                    pixelFormat.widen(
                        source + y * bytesPerRow, into: target + y * rowBytes, count: width, addingColor: addingColor, addingAlpha: addingAlpha)
                }
                initialized = rowBytes * height
            }
        }
        return Image(width: width, height: height, pixelFormat: output, pixels: pixels) ?? self
    }
}
