import Foundation
import ImagoCodecs

/// The sizes and scales an image's options give it, worked out from the
/// source's size alone before any pixel is touched, as imgproxy works them
/// out (its `prepare` step): how much of the source is cut out first (`c`),
/// the horizontal and vertical scales, the box the dpr and zoom make, the
/// result's crop for `fill`, and the canvas `exar` grows to.
///
/// Every size is in the frame of the final image: the source turned
/// upright, then by `rot`.
struct LayoutPlan: Equatable {
    /// The source's size (after trimming).
    var sourceSize: ImageSize
    /// The region `c` cuts out before scaling; 0 for a side it leaves whole.
    var cropWidth = 0
    var cropHeight = 0
    var scaleX = 1.0
    var scaleY = 1.0
    /// How much the dpr still applies to offsets, paddings and the box:
    /// less than the dpr asked for when the image may not be enlarged.
    var dprScale = 1.0
    /// The box in pixels; 0 for a free side.
    var targetWidth = 0
    var targetHeight = 0
    /// The scaled image's size.
    var scaledWidth = 0
    var scaledHeight = 0
    /// What the scaled image is cut to (`fill` and `fill-down`); 0 for none.
    var resultCropWidth = 0
    var resultCropHeight = 0
    /// The canvas `exar` extends to; 0 when it does not apply.
    var aspectWidth = 0
    var aspectHeight = 0

    /// The plan for a source of `sourceSize`; a vector source
    /// (`sourceIsVector`) is enlarged to the box without `enlarge`, as
    /// imgproxy's `calcScale` enlarges one.
    init(sourceSize: ImageSize, options: ProcessingOptions, maximumResultDimension: Int, sourceIsVector: Bool = false) {
        self.sourceSize = sourceSize
        cropWidth = Self.cropSide(sourceSize.width, options.crop.width)
        cropHeight = Self.cropSide(sourceSize.height, options.crop.height)
        let width = Self.minNonZero(cropWidth, sourceSize.width)
        let height = Self.minNonZero(cropHeight, sourceSize.height)
        computeScale(width: width, height: height, options: options, sourceIsVector: sourceIsVector)
        computeSizes(width: width, height: height, options: options)
        limit(to: maximumResultDimension, width: width, height: height, options: options)
    }

    /// The size of the region the scales apply to: the `c` crop, or the source.
    var regionSize: ImageSize {
        ImageSize(width: Self.minNonZero(cropWidth, sourceSize.width), height: Self.minNonZero(cropHeight, sourceSize.height))
    }

    /// `c`'s side: pixels from 1 up, a fraction of `side` below 1, 0 for none.
    static func cropSide(_ side: Int, _ crop: Double) -> Int {
        switch crop {
        case 0: 0
        case 1...: Int(crop)
        default: max(1, scaled(side, by: crop))
        }
    }

    /// The shrink factors for the resizing type, then zoom, enlargement,
    /// minimum sizes and the dpr, in imgproxy's order.
    private mutating func computeScale(width: Int, height: Int, options: ProcessingOptions, sourceIsVector: Bool) {
        let sourceWidth = Double(width)
        let sourceHeight = Double(height)
        let boxWidth = options.width == 0 ? sourceWidth : Double(options.width)
        let boxHeight = options.height == 0 ? sourceHeight : Double(options.height)
        var shrinkX = boxWidth == sourceWidth ? 1 : sourceWidth / boxWidth
        var shrinkY = boxHeight == sourceHeight ? 1 : sourceHeight / boxHeight
        if shrinkX != 1 || shrinkY != 1 {
            var type = options.resizingType
            if type == .auto {
                // The same orientation (both landscape or both portrait) fills.
                type = (sourceWidth - sourceHeight >= 0) == (boxWidth - boxHeight >= 0) ? .fill : .fit
            }
            switch type {
            case _ where options.width == 0 && type != .force: shrinkX = shrinkY
            case _ where options.height == 0 && type != .force: shrinkY = shrinkX
            case .fit: (shrinkX, shrinkY) = (max(shrinkX, shrinkY), max(shrinkX, shrinkY))
            case .fill, .fillDown: (shrinkX, shrinkY) = (min(shrinkX, shrinkY), min(shrinkX, shrinkY))
            default: break
            }
        }
        shrinkX /= options.zoomWidth
        shrinkY /= options.zoomHeight
        dprScale = options.dpr
        if !options.enlarge, !sourceIsVector {
            let least = min(shrinkX, shrinkY)
            if least < 1 {
                shrinkX /= least
                shrinkY /= least
                if !options.extend.isEnabled { dprScale /= least }
            }
            // The largest dpr that does not enlarge the image.
            dprScale = min(dprScale, min(shrinkX, shrinkY))
        }
        if options.minWidth > 0 {
            let least = sourceWidth / Double(options.minWidth)
            if least < shrinkX {
                shrinkY /= shrinkX / least
                shrinkX = least
            }
        }
        if options.minHeight > 0 {
            let least = sourceHeight / Double(options.minHeight)
            if least < shrinkY {
                shrinkX /= shrinkY / least
                shrinkY = least
            }
        }
        shrinkX = min(shrinkX / dprScale, sourceWidth)
        shrinkY = min(shrinkY / dprScale, sourceHeight)
        scaleX = 1 / shrinkX
        scaleY = 1 / shrinkY
    }

    private mutating func computeSizes(width: Int, height: Int, options: ProcessingOptions) {
        targetWidth = Self.scaled(options.width, by: dprScale * options.zoomWidth)
        targetHeight = Self.scaled(options.height, by: dprScale * options.zoomHeight)
        scaledWidth = Self.scaled(width, by: scaleX)
        scaledHeight = Self.scaled(height, by: scaleY)
        (resultCropWidth, resultCropHeight) = (targetWidth, targetHeight)
        if options.resizingType == .fillDown, !options.enlarge, scaledWidth > 0, scaledHeight > 0 {
            // A box larger than the image: its aspect ratio, at the image's size.
            let overX = Double(targetWidth) / Double(scaledWidth)
            let overY = Double(targetHeight) / Double(scaledHeight)
            if overX > overY, overX > 1 {
                (resultCropWidth, resultCropHeight) = (scaledWidth, Self.scaled(scaledWidth, by: Double(targetHeight) / Double(targetWidth)))
            } else if overY > overX, overY > 1 {
                (resultCropWidth, resultCropHeight) = (Self.scaled(scaledHeight, by: Double(targetWidth) / Double(targetHeight)), scaledHeight)
            }
        }
        (aspectWidth, aspectHeight) = (0, 0)
        if options.extendAspectRatio.isEnabled, targetWidth > 0, targetHeight > 0 {
            let outWidth = Self.minNonZero(scaledWidth, resultCropWidth)
            let outHeight = Self.minNonZero(scaledHeight, resultCropHeight)
            let overX = Double(targetWidth) / Double(outWidth)
            let overY = Double(targetHeight) / Double(outHeight)
            if overY > overX {
                (aspectWidth, aspectHeight) = (outWidth, Self.scaled(outWidth, by: Double(targetHeight) / Double(targetWidth)))
            } else if overX > overY {
                (aspectWidth, aspectHeight) = (Self.scaled(outHeight, by: Double(targetWidth) / Double(targetHeight)), outHeight)
            }
        }
    }

    /// Scales everything down so that the result's longer side, extension
    /// and padding included, is at most `maximum` pixels.
    private mutating func limit(to maximum: Int, width: Int, height: Int, options: ProcessingOptions) {
        guard maximum > 0 else { return }
        var outWidth = Self.minNonZero(scaledWidth, resultCropWidth)
        var outHeight = Self.minNonZero(scaledHeight, resultCropHeight)
        if options.extend.isEnabled {
            outWidth = max(outWidth, targetWidth)
            outHeight = max(outHeight, targetHeight)
        } else if options.extendAspectRatio.isEnabled {
            outWidth = max(outWidth, aspectWidth)
            outHeight = max(outHeight, aspectHeight)
        }
        let padding = options.padding
        outWidth += Self.scaledToEven(padding.left, by: dprScale) + Self.scaledToEven(padding.right, by: dprScale)
        outHeight += Self.scaledToEven(padding.top, by: dprScale) + Self.scaledToEven(padding.bottom, by: dprScale)
        guard outWidth > maximum || outHeight > maximum else { return }
        let factor = Double(maximum) / Double(max(outWidth, outHeight))
        // Never below one pixel a side.
        scaleX = max(scaleX * factor, 1 / Double(width))
        scaleY = max(scaleY * factor, 1 / Double(height))
        dprScale *= factor
        computeSizes(width: width, height: height, options: options)
    }

    static func minNonZero(_ a: Int, _ b: Int) -> Int { a == 0 ? b : b == 0 ? a : min(a, b) }

    /// `value` times `factor`, rounded half away from zero; 0 stays 0.
    static func scaled(_ value: Int, by factor: Double) -> Int { value == 0 ? 0 : Int((Double(value) * factor).rounded()) }

    /// `value` times `factor`, rounded half to even; 0 stays 0.
    static func scaledToEven(_ value: Int, by factor: Double) -> Int {
        value == 0 ? 0 : Int((Double(value) * factor).rounded(.toNearestOrEven))
    }
}

extension LayoutPlan {
    /// An offset as imgproxy reads one: `value` pixels (times `dpr`) when
    /// it is 1 or more in magnitude, else that fraction of `side`.
    static func offset(_ value: Double, of side: Int, dpr: Double) -> Int {
        abs(value) >= 1 ? Int((value * dpr).rounded(.toNearestOrEven)) : scaledToEven(side, by: value)
    }

    /// Where a `inner`-sized region goes in an `outer`-sized one under
    /// `gravity`: its top-left corner. Offsets of 1 or more are pixels
    /// (times `dpr`), smaller ones fractions of the outer side; a focus
    /// point centres the region on it. The region stays inside unless
    /// `allowsOverflow` (a watermark may stick out, but not leave).
    static func position(
        of inner: ImageSize, in outer: ImageSize, gravity: ProcessingOptions.Gravity, dpr: Double, allowsOverflow: Bool
    ) -> (x: Int, y: Int) {
        var left: Int
        var top: Int
        if gravity.anchor == .focusPoint {
            left = scaledToEven(outer.width, by: gravity.x) - inner.width / 2
            top = scaledToEven(outer.height, by: gravity.y) - inner.height / 2
        } else {
            let offsetX = offset(gravity.x, of: outer.width, dpr: dpr)
            let offsetY = offset(gravity.y, of: outer.height, dpr: dpr)
            left = Int((Double(outer.width - inner.width + 1) / 2).rounded(.toNearestOrEven)) + offsetX
            top = Int((Double(outer.height - inner.height + 1) / 2).rounded(.toNearestOrEven)) + offsetY
            switch gravity.anchor {
            case .north, .northEast, .northWest: top = offsetY
            case .south, .southEast, .southWest: top = outer.height - inner.height - offsetY
            default: break
            }
            switch gravity.anchor {
            case .east, .northEast, .southEast: left = outer.width - inner.width - offsetX
            case .west, .northWest, .southWest: left = offsetX
            default: break
            }
        }
        let (minimumX, maximumX) = allowsOverflow ? (-inner.width + 1, outer.width - 1) : (0, outer.width - inner.width)
        let (minimumY, maximumY) = allowsOverflow ? (-inner.height + 1, outer.height - 1) : (0, outer.height - inner.height)
        return (max(minimumX, min(left, maximumX)), max(minimumY, min(top, maximumY)))
    }
}
