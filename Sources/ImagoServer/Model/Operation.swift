import ImagoCodecs

/// One step of the processing model on a decoded image. A URL language's
/// layout (``ImgproxyLayout``, ``ThumborLayout``) decides the steps and
/// their numbers from the image's size, by its own rules; these carry them
/// out, the same for every language.
enum Operation: Sendable {
    /// The region with its top-left corner at (x, y).
    case crop(x: Int, y: Int, width: Int, height: Int)
    /// Resampled to exactly `size` (the same size is left alone).
    case resize(ImageSize)
    /// The stored orientation applied (or, with its inverse, undone).
    case orient(ImageOrientation)
    case flip(horizontal: Bool, vertical: Bool)
    /// A pixel operation that keeps the geometry (or only turns it).
    case effect(Effect)
    /// The image placed at (x, y) on a canvas of `canvas`, filled with
    /// `background` (transparent by default).
    case extend(canvas: ImageSize, x: Int, y: Int, background: Color = .transparent)
    /// The image placed at (x, y) on itself blurred by `radius` and
    /// stretched to `canvas` (thumbor's `fill(blur)`).
    case extendOverBlur(canvas: ImageSize, x: Int, y: Int, radius: Double)
    case watermark(Mark)
    /// A nine-patch frame drawn around and over the image.
    case frame(ImageProcessors.NinePatch)

    /// The image after the step; nil when it cannot be done (a size the
    /// image cannot take).
    func apply(to image: Image) -> Image? {
        switch self {
        case .crop(let x, let y, let width, let height): return ImageProcessors.Crop(x: x, y: y, width: width, height: height).process(image)
        case .resize(let size): return size == image.size ? image : ImageResizer.resize(image, to: size)
        case .orient(let orientation): return orientation.apply(to: image)
        case .flip(let horizontal, let vertical):
            return horizontal || vertical ? ImageProcessors.Flip(horizontal: horizontal, vertical: vertical).process(image) : image
        case .effect(let effect): return effect.apply(to: image)
        case .extend(let canvas, let x, let y, let background):
            return ImageProcessors.Embed(size: canvas, x: x, y: y, background: background).process(image)
        case .extendOverBlur(let canvas, let x, let y, let radius):
            guard let blurred = ImageProcessors.GaussianBlur(radius: radius).process(image),
                let backdrop = Operation.resize(canvas).apply(to: blurred)
            else {
                return nil
            }
            return ImageProcessors.Overlay(image, named: "fill", x: x, y: y).process(backdrop)
        case .watermark(let watermark): return watermark.draw(on: image)
        case .frame(let frame): return frame.process(image)
        }
    }
}

/// An image drawn over the answer: resized, made fainter, then placed
/// once, on a grid of tiles, or repeated with spacing.
struct Mark: Sendable {
    /// How the mark is made fainter.
    enum Fading: Sendable {
        /// Alpha multiplied by a factor from 0 to 1 as it is drawn.
        case opacity(Double)
        /// This much taken from every alpha value of the mark first
        /// (thumbor's `watermark()` alpha); the mark is drawn opaque.
        case lowered(Int)
    }

    /// Where the mark goes.
    enum Placement: Sendable {
        /// Its top-left corner at (x, y), possibly partly outside.
        case at(x: Int, y: Int)
        /// One copy at each column and row offset, on one layer.
        case grid(columns: [Int], rows: [Int])
        /// Repeated over the whole image from its top-left corner, with
        /// `spacing` transparent pixels around each copy (half on each side).
        case repeating(spacingX: Int, spacingY: Int)
    }

    var image: Image
    /// The size it is resampled to first; nil keeps its own.
    var size: ImageSize?
    var fading: Fading
    var placement: Placement

    /// `target` with the mark drawn over it.
    func draw(on target: Image) -> Image? {
        var mark = image
        if case .lowered = fading { mark = mark.addingAlpha() }
        if let size, let resized = Operation.resize(size).apply(to: mark) { mark = resized }
        var opacity = 1.0
        switch fading {
        case .opacity(let value): opacity = value
        case .lowered(let amount): if amount > 0 { mark = Self.lowered(mark, alpha: amount) }
        }
        switch placement {
        case .at(let x, let y): return ImageProcessors.Overlay(mark, named: "watermark", x: x, y: y, opacity: opacity).process(target)
        case .repeating(let spacingX, let spacingY):
            let tile = ImageSize(width: mark.width + spacingX, height: mark.height + spacingY)
            mark = ImageProcessors.Embed(size: tile, x: spacingX / 2, y: spacingY / 2).process(mark) ?? mark
            return ImageProcessors.Overlay(mark, named: "watermark", x: 0, y: 0, opacity: opacity, repeating: true).process(target)
        case .grid(let columns, let rows):
            if columns.count == 1, rows.count == 1 {
                return ImageProcessors.Overlay(mark, named: "watermark", x: columns[0], y: rows[0], opacity: opacity).process(target)
            }
            guard let layer = Self.tiled(mark, columns: columns, rows: rows, over: target.size) else { return target }
            return ImageProcessors.Overlay(layer, named: "watermark", x: 0, y: 0, opacity: opacity).process(target)
        }
    }

    /// Copies of `mark` at every column and row offset, on a transparent
    /// layer of `size`.
    private static func tiled(_ mark: Image, columns: [Int], rows: [Int], over size: ImageSize) -> Image? {
        let channels = mark.pixelFormat.bytesPerPixel
        var layer = [UInt8](repeating: 0, count: size.width * size.height * channels)
        for top in rows {
            let (firstRow, lastRow) = (max(0, -top), min(mark.height, size.height - top))
            guard firstRow < lastRow else { continue }
            for row in firstRow..<lastRow {
                for left in columns {
                    let first = max(0, -left)
                    let last = min(mark.width, size.width - left)
                    guard first < last else { continue }
                    let source = row * mark.bytesPerRow + first * channels
                    let target = ((top + row) * size.width + left + first) * channels
                    layer.replaceSubrange(
                        target..<(target + (last - first) * channels), with: mark.pixels[source..<(source + (last - first) * channels)])
                }
            }
        }
        return Image(width: size.width, height: size.height, pixelFormat: mark.pixelFormat, pixels: layer)
    }

    /// `image` (with alpha) with `amount` taken from every alpha value.
    private static func lowered(_ image: Image, alpha amount: Int) -> Image {
        let channels = image.pixelFormat.bytesPerPixel
        var pixels = image.pixels
        for y in 0..<image.height {
            for x in 0..<image.width {
                let index = y * image.bytesPerRow + x * channels + channels - 1
                pixels[index] = UInt8(max(0, Int(pixels[index]) - amount))
            }
        }
        return Image(width: image.width, height: image.height, pixelFormat: image.pixelFormat, bytesPerRow: image.bytesPerRow, pixels: pixels)
            ?? image
    }
}
