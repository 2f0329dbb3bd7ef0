import Imago

/// One PNG of many thumbnails in a grid: the demo's visible result.
struct ContactSheet {
    let cellSize: Int
    let columns: Int
    let spacing = 4
    private var canvas: [UInt8]
    let width: Int
    let height: Int

    init(count: Int, cellSize: Int, columns: Int) {
        self.cellSize = cellSize
        self.columns = max(1, min(columns, count))
        let rows = (count + self.columns - 1) / self.columns
        width = self.columns * (cellSize + spacing) + spacing
        height = max(1, rows) * (cellSize + spacing) + spacing
        canvas = [UInt8](repeating: 32, count: width * height * 3)
    }

    /// Draws `image`, scaled to fit its cell, in cell `index`.
    mutating func draw(_ image: Image, at index: Int) {
        let fitted = ImageSize(width: image.width, height: image.height).fitting(ImageSize(width: cellSize, height: cellSize))
        guard let thumbnail = ImageResizer.resize(image, to: fitted) else { return }
        let originX = spacing + (index % columns) * (cellSize + spacing) + (cellSize - thumbnail.width) / 2
        let originY = spacing + (index / columns) * (cellSize + spacing) + (cellSize - thumbnail.height) / 2
        let channels = thumbnail.pixelFormat.bytesPerPixel
        for y in 0..<thumbnail.height {
            for x in 0..<thumbnail.width {
                let source = y * thumbnail.bytesPerRow + x * channels
                let target = ((originY + y) * width + originX + x) * 3
                switch thumbnail.pixelFormat {
                case .gray8, .grayAlpha8:
                    let gray = thumbnail.pixels[source]
                    canvas[target] = gray
                    canvas[target + 1] = gray
                    canvas[target + 2] = gray
                case .rgb8, .rgba8:
                    canvas[target] = thumbnail.pixels[source]
                    canvas[target + 1] = thumbnail.pixels[source + 1]
                    canvas[target + 2] = thumbnail.pixels[source + 2]
                }
            }
        }
    }

    var image: Image? { Image(width: width, height: height, pixelFormat: .rgb8, pixels: canvas) }
}
