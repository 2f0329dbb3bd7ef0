import Foundation
import ImagoCodecs

/// Makes a decoded source into the answer's image as its options say, in
/// imgproxy's order: trimmed, turned and flipped, cut (`c`), scaled, cut to
/// the result (`fill`), filtered, extended, padded, flattened and
/// watermarked. The sizes come from a ``LayoutPlan`` of the source at full
/// size, so the answer is the same whether the decoder scaled the image
/// down while decoding or not.
struct LayoutProcessor: ImageProcessing {
    let options: ProcessingOptions
    /// The source's size turned upright, at full resolution; nil when the
    /// decoded image is at full resolution.
    let sourceSize: ImageSize?
    /// How the source was stored: undone when `ar:0` asks for the image as stored.
    let orientation: ImageOrientation
    /// Whether the answer's format has no alpha channel (transparent
    /// pixels are then filled with the background).
    let outputIsOpaque: Bool
    /// The result's longest side, extension and padding included.
    let maximumResultDimension: Int
    /// The operator's watermark, for `wm`.
    let watermark: Image?
    /// Whether the source is a vector image (SVG): it is scaled up to the
    /// box without `enlarge`, as imgproxy scales one, and decoded at the
    /// size the answer needs however large.
    var sourceIsVector = false

    var identifier: String { "layout(\(options.cacheKey))" }

    /// The size to decode the source at: scaled down as far as the layout
    /// allows, so that a decoder that can (JPEG's DCT scaling) skips the
    /// pixels the answer does not need, or for a vector source scaled up
    /// too, so that it is rendered at the answer's size rather than
    /// resampled up; nil for the full size (trimming, whose borders are
    /// only known once decoded, or an unknown size).
    var decodeSize: ImageSize? {
        guard !options.trim.isEnabled, let upright = sourceSize else { return nil }
        let swapped = (!options.autoRotate && orientation.swapsDimensions) != (options.rotate % 180 != 0)
        let frame = swapped ? upright.transposed : upright
        let plan = LayoutPlan(sourceSize: frame, options: options, maximumResultDimension: maximumResultDimension, sourceIsVector: sourceIsVector)
        let scale = max(plan.scaleX, plan.scaleY)
        guard scale < 1 || sourceIsVector else { return nil }
        // Rounded as the plan rounds the scaled image, so that a decode
        // filling this size is that image, with nothing left to resample.
        let size = ImageSize(width: max(1, LayoutPlan.scaled(frame.width, by: scale)), height: max(1, LayoutPlan.scaled(frame.height, by: scale)))
        return swapped ? size.transposed : size
    }

    func process(_ decoded: Image) -> Image? {
        var image = decoded
        var fullSize = sourceSize ?? decoded.size
        if !options.autoRotate, orientation != .up {
            guard let upright = Operation.orient(orientation.inverse).apply(to: image) else { return nil }
            image = upright
            if orientation.swapsDimensions { fullSize = fullSize.transposed }
        }
        if options.trim.isEnabled, let trimmed = trimmed(image) {
            // Trimming decodes at full size (the service asks for no scaling).
            image = trimmed
            fullSize = trimmed.size
        }
        if options.rotate != 0 {
            guard let turned = Operation.effect(.rotate(quarterTurns: options.rotate / 90)).apply(to: image) else { return nil }
            image = turned
            if options.rotate % 180 != 0 { fullSize = fullSize.transposed }
        }
        if options.flipHorizontal || options.flipVertical {
            guard let flipped = Operation.flip(horizontal: options.flipHorizontal, vertical: options.flipVertical).apply(to: image) else {
                return nil
            }
            image = flipped
        }
        let plan = LayoutPlan(sourceSize: fullSize, options: options, maximumResultDimension: maximumResultDimension, sourceIsVector: sourceIsVector)
        guard let scaled = cropAndScale(image, plan: plan) else { return nil }
        image = scaled
        if let cut = cropToResult(image, plan: plan) { image = cut }
        image = filtered(image, plan: plan)
        if options.extend.isEnabled {
            image = extended(image, to: ImageSize(width: plan.targetWidth, height: plan.targetHeight), gravity: options.extend.gravity, plan: plan)
        }
        if options.extendAspectRatio.isEnabled, plan.aspectWidth > 0, plan.aspectHeight > 0 {
            image = extended(
                image, to: ImageSize(width: plan.aspectWidth, height: plan.aspectHeight), gravity: options.extendAspectRatio.gravity, plan: plan)
        }
        if !options.padding.isEmpty { image = padded(image, plan: plan) }
        if options.flatten || outputIsOpaque { image = Operation.effect(.flatten(background: options.background)).apply(to: image) ?? image }
        if options.watermark.isEnabled, let watermark { image = watermarked(image, with: watermark, plan: plan) }
        return image
    }

    /// The image with its borders of one colour cut off; nil when nothing
    /// would be left (the image is kept whole then).
    private func trimmed(_ image: Image) -> Image? {
        let trim = options.trim
        guard
            let bounds = image.trimmedBounds(
                threshold: trim.threshold, background: trim.color, equalHorizontal: trim.equalHorizontal, equalVertical: trim.equalVertical)
        else { return nil }
        return Operation.crop(x: bounds.x, y: bounds.y, width: bounds.width, height: bounds.height).apply(to: image)
    }

    /// `c`'s region cut out, then scaled to the plan's size. The region is
    /// placed on the full-size source and carried over to the decoded
    /// image, which may be smaller.
    private func cropAndScale(_ image: Image, plan: LayoutPlan) -> Image? {
        let full = plan.sourceSize
        let factorX = Double(image.width) / Double(full.width)
        let factorY = Double(image.height) / Double(full.height)
        var region = (x: 0, y: 0, width: full.width, height: full.height)
        var working = image
        let wanted = plan.regionSize
        if wanted != full {
            let gravity = options.crop.gravity ?? options.gravity
            if gravity.anchor == .smart {
                let size = ImageSize(width: max(1, Int(Double(wanted.width) * factorX)), height: max(1, Int(Double(wanted.height) * factorY)))
                let corner = Saliency.bestCrop(in: image, width: size.width, height: size.height)
                region = (Int(Double(corner.x) / factorX), Int(Double(corner.y) / factorY), wanted.width, wanted.height)
            } else {
                let corner = LayoutPlan.position(of: wanted, in: full, gravity: gravity, dpr: 1, allowsOverflow: false)
                region = (corner.x, corner.y, wanted.width, wanted.height)
            }
            let left = Int((Double(region.x) * factorX).rounded())
            let top = Int((Double(region.y) * factorY).rounded())
            let right = min(image.width, max(left + 1, Int((Double(region.x + region.width) * factorX).rounded())))
            let bottom = min(image.height, max(top + 1, Int((Double(region.y + region.height) * factorY).rounded())))
            guard let cut = Operation.crop(x: left, y: top, width: right - left, height: bottom - top).apply(to: image) else { return nil }
            working = cut
        }
        let size = ImageSize(
            width: max(1, LayoutPlan.scaled(region.width, by: plan.scaleX)), height: max(1, LayoutPlan.scaled(region.height, by: plan.scaleY)))
        return Operation.resize(size).apply(to: working)
    }

    /// The scaled image cut to the plan's result crop, around the gravity;
    /// nil when it already fits.
    private func cropToResult(_ image: Image, plan: LayoutPlan) -> Image? {
        guard plan.resultCropWidth > 0 || plan.resultCropHeight > 0 else { return nil }
        let size = ImageSize(
            width: LayoutPlan.minNonZero(plan.resultCropWidth, image.width), height: LayoutPlan.minNonZero(plan.resultCropHeight, image.height))
        guard size.width < image.width || size.height < image.height else { return nil }
        let clamped = ImageSize(width: min(size.width, image.width), height: min(size.height, image.height))
        let corner =
            options.gravity.anchor == .smart
            ? Saliency.bestCrop(in: image, width: clamped.width, height: clamped.height)
            : LayoutPlan.position(of: clamped, in: image.size, gravity: options.gravity, dpr: plan.dprScale, allowsOverflow: false)
        return Operation.crop(x: corner.x, y: corner.y, width: clamped.width, height: clamped.height).apply(to: image)
    }

    /// The options' effects (``ProcessingOptions/effects(dprScale:)``), in order.
    private func filtered(_ image: Image, plan: LayoutPlan) -> Image {
        options.effects(dprScale: plan.dprScale).reduce(image) { image, effect in Operation.effect(effect).apply(to: image) ?? image }
    }

    /// The image on a transparent canvas of `size` (a free side or one the
    /// image already covers keeps the image's), placed by `gravity`.
    private func extended(_ image: Image, to size: ImageSize, gravity: ProcessingOptions.Gravity, plan: LayoutPlan) -> Image {
        guard size.width > image.width || size.height > image.height else { return image }
        let canvas = ImageSize(width: size.width > 0 ? size.width : image.width, height: size.height > 0 ? size.height : image.height)
        let corner = LayoutPlan.position(of: image.size, in: canvas, gravity: gravity, dpr: plan.dprScale, allowsOverflow: false)
        return Operation.extend(canvas: canvas, x: corner.x, y: corner.y).apply(to: image) ?? image
    }

    private func padded(_ image: Image, plan: LayoutPlan) -> Image {
        let padding = options.padding
        let top = LayoutPlan.scaledToEven(padding.top, by: plan.dprScale)
        let right = LayoutPlan.scaledToEven(padding.right, by: plan.dprScale)
        let bottom = LayoutPlan.scaledToEven(padding.bottom, by: plan.dprScale)
        let left = LayoutPlan.scaledToEven(padding.left, by: plan.dprScale)
        let canvas = ImageSize(width: image.width + left + right, height: image.height + top + bottom)
        return Operation.extend(canvas: canvas, x: left, y: top).apply(to: image) ?? image
    }

    /// The watermark scaled (`wm`'s scale, a fraction of the image's size),
    /// then drawn at its position, or tiled with its offsets as spacing.
    private func watermarked(_ image: Image, with watermark: Image, plan: LayoutPlan) -> Image {
        let settings = options.watermark
        var size: ImageSize?
        if settings.scale > 0 {
            let box = ImageSize(
                width: max(1, LayoutPlan.scaledToEven(image.width, by: settings.scale)),
                height: max(1, LayoutPlan.scaledToEven(image.height, by: settings.scale)))
            // Fitted to the box, enlarged if need be, as imgproxy scales its watermark.
            let factor = min(Double(box.width) / Double(watermark.width), Double(box.height) / Double(watermark.height))
            size = ImageSize(
                width: max(1, LayoutPlan.scaled(watermark.width, by: factor)), height: max(1, LayoutPlan.scaled(watermark.height, by: factor)))
        }
        let position = settings.position
        let placement: Mark.Placement
        if position.anchor == .replicate {
            placement = .repeating(
                spacingX: max(0, LayoutPlan.offset(position.x, of: image.width, dpr: plan.dprScale)),
                spacingY: max(0, LayoutPlan.offset(position.y, of: image.height, dpr: plan.dprScale)))
        } else {
            let corner = LayoutPlan.position(of: size ?? watermark.size, in: image.size, gravity: position, dpr: plan.dprScale, allowsOverflow: true)
            placement = .at(x: corner.x, y: corner.y)
        }
        let mark = Mark(image: watermark, size: size, fading: .opacity(settings.opacity), placement: placement)
        return Operation.watermark(mark).apply(to: image) ?? image
    }
}
