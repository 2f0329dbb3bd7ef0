extension Image {
    /// RGB or RGBA pixels and their row length, for encoders that take
    /// colour only: gray is spread over the three colours, alpha kept.
    func colorPixels() -> (pixels: [UInt8], bytesPerRow: Int) {
        switch pixelFormat {
        case .rgb8, .rgba8:
            return (pixels, bytesPerRow)
        case .gray8, .grayAlpha8:
            let hasAlpha = pixelFormat.hasAlpha
            let channels = hasAlpha ? 2 : 1
            let outputChannels = hasAlpha ? 4 : 3
            var color = [UInt8](repeating: 0, count: width * height * outputChannels)
            for y in 0..<height {
                for x in 0..<width {
                    let source = y * bytesPerRow + x * channels
                    let target = (y * width + x) * outputChannels
                    let gray = pixels[source]
                    color[target] = gray
                    color[target + 1] = gray
                    color[target + 2] = gray
                    if hasAlpha { color[target + 3] = pixels[source + 1] }
                }
            }
            return (color, width * outputChannels)
        }
    }
}
