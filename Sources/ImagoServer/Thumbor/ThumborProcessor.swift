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
    /// The images of the URL's `watermark()` and `frame()` filters, by their URL as written.
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

    /// The same layout, drawing `watermarks` for its `watermark()` and `frame()` filters.
    func drawing(_ watermarks: [String: Image]) -> ThumborProcessor { ThumborProcessor(path: path, filters: filters, watermarks: watermarks) }

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
            guard let trimmed = Operation.crop(x: box.x, y: box.y, width: box.width, height: box.height).apply(to: image) else { return nil }
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
                guard let cropped = Operation.crop(x: left, y: top, width: right - left, height: bottom - top).apply(to: image) else { return nil }
                image = cropped
            case .resize(let width, let height):
                guard let resized = Operation.resize(ImageSize(width: width, height: height)).apply(to: image) else { return nil }
                image = resized
            }
        }
        if !path.isDebug, path.flipsHorizontally || path.flipsVertically {
            guard let flipped = Operation.flip(horizontal: path.flipsHorizontally, vertical: path.flipsVertically).apply(to: image) else {
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
            guard let cropped = Operation.crop(x: left, y: top, width: right - left, height: bottom - top).apply(to: image) else { return nil }
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
            return size.width >= 1 && size.height >= 1 ? Operation.resize(size).apply(to: image) : image
        case .upscale:
            let (width, height) = (plan.requestedWidth, plan.requestedHeight)
            guard width > 0, height > 0, image.width < width, image.height < height else { return image }
            let size =
                Double(image.width) / Double(width) >= Double(image.height) / Double(height)
                ? ImageSize(width: width, height: max(1, image.height * width / image.width))
                : ImageSize(width: max(1, image.width * height / image.height), height: height)
            return Operation.resize(size).apply(to: image)
        case .backgroundColor(let fill):
            guard let color = Self.color(fill, of: image) else { return image }
            return Effect.flatten(background: color).apply(to: image)
        case .fill(let fill, let composites):
            let canvas = ImageSize(
                width: plan.requestedWidth > 0 ? plan.requestedWidth : image.width,
                height: plan.requestedHeight > 0 ? plan.requestedHeight : image.height)
            let (x, y) = ((canvas.width - image.width) / 2, (canvas.height - image.height) / 2)
            if case .blur = fill { return Operation.extendOverBlur(canvas: canvas, x: x, y: y, radius: 100).apply(to: image) }
            guard let color = Self.color(fill, of: image) else { return image }
            let placed = composites ? Operation.effect(.flatten(background: color)).apply(to: image) : image
            return placed.flatMap { Operation.extend(canvas: canvas, x: x, y: y, background: color).apply(to: $0) }
        case .frame(let url):
            guard let patch = watermarks[url], let frame = ImageProcessors.NinePatch(patch: patch) else { return image }
            return Operation.frame(frame).apply(to: image)
        case .watermark(let url, let x, let y, let alpha, let widthRatio, let heightRatio):
            guard let mark = watermarks[url] else { return image }
            return Self.watermarked(image, with: mark, x: x, y: y, alpha: alpha, widthRatio: widthRatio, heightRatio: heightRatio)
        default:
            guard let effect = filter.effect else { return image }
            return Operation.effect(effect).apply(to: image)
        }
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
        var size = mark.size
        if widthRatio != nil || heightRatio != nil {
            let maxWidth =
                widthRatio.map { Double(image.width * $0) / 100 }
                ?? Double(mark.width) * Double(image.height * (heightRatio ?? 0)) / 100 / Double(mark.height)
            let maxHeight = heightRatio.map { Double(image.height * $0) / 100 } ?? Double(mark.height) * maxWidth / Double(mark.width)
            size =
                Double(mark.width) / maxWidth >= Double(mark.height) / maxHeight
                ? ImageSize(width: Int(maxWidth.rounded()), height: Int((Double(mark.height) * maxWidth / Double(mark.width)).rounded()))
                : ImageSize(width: Int((Double(mark.width) * maxHeight / Double(mark.height)).rounded()), height: Int(maxHeight.rounded()))
            guard size.width > 0, size.height > 0 else { return image }
        }
        let bothRepeat = x == .repeat && y == .repeat
        let columns = positions(x, side: image.width, markSide: size.width, bothRepeat: bothRepeat, other: (image.height, size.height))
        let rows = positions(y, side: image.height, markSide: size.height, bothRepeat: bothRepeat, other: (image.width, size.width))
        let drawn = Mark(image: mark, size: size, fading: .lowered(255 * min(alpha, 100) / 100), placement: .grid(columns: columns, rows: rows))
        return Operation.watermark(drawn).apply(to: image)
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
}
