import Foundation
import ImagoCodecs

/// A thumbor URL's transformation of a decoded image, in thumbor 7.8's
/// order: the trim, the ``ThumborPlan``'s crops and resize, the flips, then
/// the pixel filters in the order the URL gives them. The filters that
/// set how the answer is written (quality, format, max_bytes, max_age,
/// strip_icc, strip_exif, autojpg) are the service's; `focal` and
/// `no_upscale` go into the plan.
struct ThumborProcessor: ImageProcessing {
    let path: ThumborPath
    let filters: [ThumborFilter]
    /// The images of the URL's `watermark()` filters, by their URL as written.
    let watermarks: [String: Image]
    /// The canonical text of the URL's options: the cache key's part.
    let identifier: String

    init(path: ThumborPath, filters: [ThumborFilter], watermarks: [String: Image] = [:]) {
        self.path = path
        self.filters = filters
        self.watermarks = watermarks
        // The image part names the source, which the key holds, unless
        // extract_focal() reads a focal region from it.
        identifier = "thumbor(\(filters.contains(.extractFocal) ? path.signedText : path.signedText.dropLast(path.image.count)))"
    }

    func process(_ image: Image) -> Image? { run(image)?.image }

    /// What a run did, for `/meta`: the trim's crop (if it cut anything)
    /// and the plan it followed.
    struct Run {
        var image: Image
        /// The crops and resizes done, the trim's first; none under `debug/`.
        var operations: [ThumborPlan.Operation]
        var plan: ThumborPlan
    }

    /// The transformation, and what it did.
    func run(_ image: Image) -> Run? {
        let loadedSize = image.size
        var image = image
        var trimOffset = (x: 0, y: 0)
        var trimOperation: ThumborPlan.Operation?
        if let trim = path.trim, let box = Self.trimmedBounds(of: image, fromBottomRight: trim.fromBottomRight, tolerance: trim.tolerance) {
            guard let trimmed = ImageProcessors.Crop(x: box.x, y: box.y, width: box.width, height: box.height).process(image) else { return nil }
            image = trimmed
            trimOffset = (box.x, box.y)
            trimOperation = .crop(left: box.x, top: box.y, right: box.x + box.width, bottom: box.y + box.height)
        }
        var regions = filters.compactMap { filter -> ThumborPath.Crop? in
            if case .focal(let region) = filter { return region }
            return nil
        }
        func makePlan() -> ThumborPlan {
            ThumborPlan(
                size: image.size, trimOffset: trimOffset, loadedSize: loadedSize, path: path, focalRegions: regions,
                noUpscale: filters.contains(.noUpscale), stretch: filters.contains(.stretch))
        }
        var plan = makePlan()
        // smart/ without focal regions: the crop goes around the most salient window of its size.
        if path.isSmart, regions.isEmpty, let window = smartWindow(in: image, plan: plan) {
            regions = [window]
            plan = makePlan()
        }
        // debug/ leaves the size alone (thumbor outlines the focal points; Imago does not).
        let operations = path.isDebug ? [] : plan.operations
        for operation in operations {
            switch operation {
            case .crop(let left, let top, let right, let bottom):
                guard let cropped = ImageProcessors.Crop(x: left, y: top, width: right - left, height: bottom - top).process(image) else {
                    return nil
                }
                image = cropped
            case .resize(let width, let height):
                guard let resized = Self.resized(image, to: ImageSize(width: width, height: height)) else { return nil }
                image = resized
            }
        }
        if !path.isDebug, path.flipsHorizontally || path.flipsVertically {
            guard let flipped = ImageProcessors.Flip(horizontal: path.flipsHorizontally, vertical: path.flipsVertically).process(image) else {
                return nil
            }
            image = flipped
        }
        for filter in filters {
            guard let filtered = apply(filter, to: image, plan: plan) else { return nil }
            image = filtered
        }
        return Run(image: image, operations: (trimOperation.map { [$0] } ?? []) + operations, plan: plan)
    }

    /// The window the plan's crop to the target's aspect ratio would cut,
    /// placed where ``Saliency`` finds the most interest, as a focal region
    /// in the coordinates focal regions are given in; nil when the plan
    /// makes no such crop (fit-in, or the ratios already agree).
    private func smartWindow(in image: Image, plan: ThumborPlan) -> ThumborPath.Crop? {
        var operations = plan.operations[...]
        var area = image
        var origin = (x: 0, y: 0)
        if path.crop != nil, case .crop(let left, let top, let right, let bottom) = operations.first {
            guard let cropped = ImageProcessors.Crop(x: left, y: top, width: right - left, height: bottom - top).process(image) else { return nil }
            area = cropped
            origin = (left, top)
            operations = operations.dropFirst()
        }
        guard case .crop(let left, let top, let right, let bottom) = operations.first else { return nil }
        let corner = Saliency.bestCrop(in: area, width: right - left, height: bottom - top)
        return ThumborPath.Crop(
            left: origin.x + corner.x, top: origin.y + corner.y, right: origin.x + corner.x + right - left, bottom: origin.y + corner.y + bottom - top
        )
    }

    /// `image` after one post-transform filter: the model's ``Effect`` the
    /// filter names, or one of the filters that depend on the plan; the
    /// image itself for the filters that are not about pixels.
    private func apply(_ filter: ThumborFilter, to image: Image, plan: ThumborPlan) -> Image? {
        switch filter {
        case .proportion(let ratio):
            guard ratio > 0, ratio <= 1 else { return image }
            let size = ImageSize(width: Int(Double(image.width) * ratio), height: Int(Double(image.height) * ratio))
            return size.width >= 1 && size.height >= 1 ? Self.resized(image, to: size) : image
        case .upscale:
            let (width, height) = (plan.requestedWidth, plan.requestedHeight)
            guard width > 0, height > 0, image.width < width, image.height < height else { return image }
            let size =
                Double(image.width) / Double(width) >= Double(image.height) / Double(height)
                ? ImageSize(width: width, height: max(1, image.height * width / image.width))
                : ImageSize(width: max(1, image.width * height / image.height), height: height)
            return Self.resized(image, to: size)
        case .backgroundColor(let fill):
            guard let color = Self.color(fill, of: image) else { return image }
            return Effect.flatten(background: color).apply(to: image)
        case .fill(let fill, let composites):
            let canvas = ImageSize(
                width: plan.requestedWidth > 0 ? plan.requestedWidth : image.width,
                height: plan.requestedHeight > 0 ? plan.requestedHeight : image.height)
            let (x, y) = ((canvas.width - image.width) / 2, (canvas.height - image.height) / 2)
            if case .blur = fill {
                guard let blurred = ImageProcessors.GaussianBlur(radius: 100).process(image), let backdrop = Self.resized(blurred, to: canvas) else {
                    return nil
                }
                return ImageProcessors.Overlay(image, named: "fill", x: x, y: y).process(backdrop)
            }
            guard let color = Self.color(fill, of: image) else { return image }
            let placed = composites ? ImageProcessors.Flatten(background: color).process(image) : image
            return placed.flatMap { ImageProcessors.Embed(size: canvas, x: x, y: y, background: color).process($0) }
        case .watermark(let url, let x, let y, let alpha, let widthRatio, let heightRatio):
            guard let mark = watermarks[url] else { return image }
            return Self.watermarked(image, with: mark, x: x, y: y, alpha: alpha, widthRatio: widthRatio, heightRatio: heightRatio)
        default:
            guard let effect = filter.effect else { return image }
            return effect.apply(to: image)
        }
    }

    /// A resize to exactly `size`, enlarging or shrinking.
    static func resized(_ image: Image, to size: ImageSize) -> Image? {
        size == image.size ? image : ImageResizer.resize(image, to: size)
    }

    /// The colour a `fill` or `background_color` names, `auto` being the image's mean colour.
    private static func color(_ fill: ThumborFilter.Fill, of image: Image) -> Color? {
        switch fill {
        case .color(let name): return Color(cssName: name)
        case .transparent: return .transparent
        case .blur: return nil
        case .auto:
            // The mean of each colour channel, truncated, as thumbor takes it (gray is three equal channels).
            let channels = image.pixelFormat.bytesPerPixel
            let colorChannels = channels <= 2 ? 1 : 3
            var sums = [Int](repeating: 0, count: colorChannels)
            for y in 0..<image.height {
                let row = y * image.bytesPerRow
                for x in 0..<image.width {
                    for channel in 0..<colorChannels { sums[channel] += Int(image.pixels[row + x * channels + channel]) }
                }
            }
            let means = sums.map { UInt8($0 / (image.width * image.height)) }
            return colorChannels == 1 ? Color(red: means[0], green: means[0], blue: means[0]) : Color(red: means[0], green: means[1], blue: means[2])
        }
    }

    /// thumbor's trim: the smallest rectangle holding every pixel farther
    /// than `tolerance` (Euclidean, over every channel, alpha included)
    /// from the top-left or bottom-right pixel; nil when there is none.
    static func trimmedBounds(of image: Image, fromBottomRight: Bool, tolerance: Int) -> (x: Int, y: Int, width: Int, height: Int)? {
        let channels = image.pixelFormat.bytesPerPixel
        // Gray counts three times, as thumbor compares it after turning it to RGB.
        let colorWeight = channels <= 2 ? 3 : 1
        let colorChannels = image.pixelFormat.hasAlpha ? channels - 1 : channels
        let referenceStart = fromBottomRight ? (image.height - 1) * image.bytesPerRow + (image.width - 1) * channels : 0
        let reference = (0..<channels).map { Int(image.pixels[referenceStart + $0]) }
        let limit = tolerance * tolerance
        var (left, top, right, bottom) = (Int.max, Int.max, -1, -1)
        image.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<image.height {
                var index = y * image.bytesPerRow
                for x in 0..<image.width {
                    var distance = 0
                    for channel in 0..<channels {
                        let difference = Int(pixels[index + channel]) - reference[channel]
                        distance += difference * difference * (channel < colorChannels ? colorWeight : 1)
                    }
                    index += channels
                    guard distance > limit else { continue }
                    (left, top, right, bottom) = (min(left, x), min(top, y), max(right, x), max(bottom, y))
                }
            }
        }
        guard right >= left, bottom >= top else { return nil }
        return (left, top, right - left + 1, bottom - top + 1)
    }

    /// `mark` drawn on `image` as thumbor's `watermark()` draws it: `alpha`
    /// percent of 255 taken from its alpha, fitted to the size ratios of
    /// the image, at the position each axis gives, or tiled with the
    /// spare room shared out between the tiles.
    private static func watermarked(
        _ image: Image, with mark: Image, x: ThumborFilter.Position, y: ThumborFilter.Position, alpha: Int, widthRatio: Int?,
        heightRatio: Int?
    ) -> Image? {
        var mark = mark.addingAlpha()
        if widthRatio != nil || heightRatio != nil {
            let maxWidth =
                widthRatio.map { Double(image.width * $0) / 100 }
                ?? Double(mark.width) * Double(image.height * (heightRatio ?? 0)) / 100 / Double(mark.height)
            let maxHeight = heightRatio.map { Double(image.height * $0) / 100 } ?? Double(mark.height) * maxWidth / Double(mark.width)
            let size =
                Double(mark.width) / maxWidth >= Double(mark.height) / maxHeight
                ? ImageSize(width: Int(maxWidth.rounded()), height: Int((Double(mark.height) * maxWidth / Double(mark.width)).rounded()))
                : ImageSize(width: Int((Double(mark.width) * maxHeight / Double(mark.height)).rounded()), height: Int(maxHeight.rounded()))
            guard size.width > 0, size.height > 0, let resized = resized(mark, to: size) else { return image }
            mark = resized
        }
        if alpha > 0 { mark = lowered(mark, alpha: 255 * min(alpha, 100) / 100) }
        let bothRepeat = x == .repeat && y == .repeat
        let columns = positions(x, side: image.width, markSide: mark.width, bothRepeat: bothRepeat, other: (image.height, mark.height))
        let rows = positions(y, side: image.height, markSide: mark.height, bothRepeat: bothRepeat, other: (image.width, mark.width))
        if columns.count == 1, rows.count == 1 {
            return ImageProcessors.Overlay(mark, named: "watermark", x: columns[0], y: rows[0]).process(image)
        }
        // The tiles laid on one transparent layer, drawn once.
        let channels = mark.pixelFormat.bytesPerPixel
        var layer = [UInt8](repeating: 0, count: image.width * image.height * channels)
        for top in rows {
            for row in max(0, -top)..<min(mark.height, image.height - top) {
                for left in columns {
                    let first = max(0, -left)
                    let last = min(mark.width, image.width - left)
                    guard first < last else { continue }
                    let source = row * mark.bytesPerRow + first * channels
                    let target = ((top + row) * image.width + left + first) * channels
                    layer.replaceSubrange(
                        target..<(target + (last - first) * channels), with: mark.pixels[source..<(source + (last - first) * channels)])
                }
            }
        }
        guard let tiles = Image(width: image.width, height: image.height, pixelFormat: mark.pixelFormat, pixels: layer) else { return image }
        return ImageProcessors.Overlay(tiles, named: "watermark", x: 0, y: 0).process(image)
    }

    /// Where the watermark goes on one axis: one place, or every tile's.
    private static func positions(
        _ position: ThumborFilter.Position, side: Int, markSide: Int, bothRepeat: Bool, other: (side: Int, markSide: Int)
    ) -> [Int] {
        switch position {
        case .pixels(let value, let fromEnd): return [fromEnd ? side - markSide - value : value]
        case .percent(let value, let fromEnd):
            let pixels = Int((Double(side * value) / 100 + 1e-5).rounded())
            return [fromEnd ? side - markSide - pixels : pixels]
        case .center: return [(side - markSide) / 2]
        case .repeat:
            func tiling(_ side: Int, _ markSide: Int) -> (count: Int, spare: Int) {
                Double(side) / Double(markSide) < 2 ? (Int((Double(side) / Double(markSide)).rounded(.up)), 10) : (side / markSide, side % markSide)
            }
            var (count, spare) = tiling(side, markSide)
            if bothRepeat, count * tiling(other.side, other.markSide).count > 100 {
                count = min(6, count)
                spare = side - count * markSide
            }
            let spacing = spare / (max(count, 2) - 1)
            return (0..<count).map { $0 * (spacing + markSide) }
        }
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
