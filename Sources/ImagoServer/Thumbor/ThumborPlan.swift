import Foundation
import ImagoCodecs

/// What thumbor 7.8's transformer does to an image of a given size for a
/// thumbor URL, worked out before touching a pixel: the manual crop, the
/// crop that fits the target's aspect ratio around the focal point, the
/// resize, with thumbor's own rounding at each step (half to even for
/// target sizes and crop offsets, half up in fit-in, a ceiling for one
/// crop width). The trim, which needs the pixels, comes before: the plan
/// starts from the trimmed size and the trim's offset.
///
/// Differences from thumbor, where it answers 500: `orig` beside a 0 or
/// missing side is the image's size on both, and `no_upscale()` leaves an
/// `orig` side as it is.
struct ThumborPlan: Sendable, Equatable {
    /// One step, in the coordinates of the image as it is before the step.
    enum Operation: Sendable, Equatable {
        /// Right and bottom exclusive.
        case crop(left: Int, top: Int, right: Int, bottom: Int)
        case resize(width: Int, height: Int)
    }

    /// A point the crop keeps in view, weighted: a `focal()` region's
    /// centre (its area as weight), or the alignment's point (weight 1).
    struct FocalPoint: Sendable, Equatable {
        var x: Int
        var y: Int
        var weight: Double
        var width = 1
        var height = 1
        var isExplicit = false
    }

    var operations: [Operation] = []
    var focalPoints: [FocalPoint] = []
    /// The size once the operations are done.
    var size: ImageSize
    /// The size the request stands for after the transform: what `fill()`'s
    /// canvas and `upscale()` take; 0 for a side the request leaves open.
    var requestedWidth: Int
    var requestedHeight: Int
    /// The target size before the resize, as /meta reports it.
    var target: (width: Double, height: Double) { (targetWidth, targetHeight) }
    private var targetWidth: Double = 0
    private var targetHeight: Double = 0

    static func == (lhs: ThumborPlan, rhs: ThumborPlan) -> Bool {
        lhs.operations == rhs.operations && lhs.focalPoints == rhs.focalPoints && lhs.size == rhs.size
            && lhs.requestedWidth == rhs.requestedWidth && lhs.requestedHeight == rhs.requestedHeight
    }

    /// The plan for an image of `size` (after the trim, which cut
    /// `trimOffset` from its top left) loaded at `loadedSize`, with the
    /// focal regions of the URL's `focal()` filters.
    init(
        size imageSize: ImageSize, trimOffset: (x: Int, y: Int) = (0, 0), loadedSize: ImageSize, path: ThumborPath,
        focalRegions: [ThumborPath.Crop] = [], noUpscale: Bool = false, stretch: Bool = false
    ) {
        var width = imageSize.width
        var height = imageSize.height
        size = imageSize
        // no_upscale() runs as the image is loaded: each side at most the loaded image's.
        var requestWidth = path.width
        var requestHeight = path.height
        if noUpscale {
            if case .pixels(let pixels) = requestWidth { requestWidth = .pixels(min(pixels, loadedSize.width)) }
            if case .pixels(let pixels) = requestHeight { requestHeight = .pixels(min(pixels, loadedSize.height)) }
        }
        // The manual crop, in the loaded image's coordinates moved by the trim, clamped; dropped if empty.
        var cropBox: ThumborPath.Crop?
        if let crop = path.crop {
            let left = min(max(crop.left - trimOffset.x, 0), width)
            let top = min(max(crop.top - trimOffset.y, 0), height)
            let right = min(max(crop.right - trimOffset.x, 0), width)
            let bottom = min(max(crop.bottom - trimOffset.y, 0), height)
            if left < right, top < bottom {
                cropBox = ThumborPath.Crop(left: left, top: top, right: right, bottom: bottom)
                operations.append(.crop(left: left, top: top, right: right, bottom: bottom))
                width = right - left
                height = bottom - top
            }
        }
        // The target size (thumbor's `orig` beside a 0 side is an error; here it is the image's side).
        func side(_ requested: ThumborPath.Side, own: Int, other: ThumborPath.Side, otherOwn: Int, ratio: Double) -> Double {
            switch (requested, other) {
            case (.original, _): return Double(own)
            case (.pixels(let pixels), _) where pixels > 0: return Double(pixels)
            case (.pixels, .original): return Double(own)
            case (.pixels, .pixels(let otherPixels)): return (Double(otherPixels) * ratio).rounded(.toNearestOrEven)
            }
        }
        if requestWidth == .pixels(0), requestHeight == .pixels(0) {
            targetWidth = Double(width)
            targetHeight = Double(height)
        } else {
            targetWidth = side(requestWidth, own: width, other: requestHeight, otherOwn: height, ratio: Double(width) / Double(height))
            targetHeight = side(requestHeight, own: height, other: requestWidth, otherOwn: width, ratio: Double(height) / Double(width))
        }
        requestedWidth = Self.value(requestWidth, own: width)
        requestedHeight = Self.value(requestHeight, own: height)
        // Focal points: the regions inside the manual crop, moved into it; else the alignment's point.
        for region in focalRegions {
            let point = FocalPoint(
                x: region.left + (region.right - region.left) / 2, y: region.top + (region.bottom - region.top) / 2,
                weight: Double((region.right - region.left) * (region.bottom - region.top)), width: region.right - region.left,
                height: region.bottom - region.top, isExplicit: true)
            if let cropBox {
                guard (cropBox.left...cropBox.right).contains(point.x), (cropBox.top...cropBox.bottom).contains(point.y) else { continue }
                focalPoints.append(
                    FocalPoint(
                        x: point.x - cropBox.left, y: point.y - cropBox.top, weight: point.weight, width: point.width, height: point.height,
                        isExplicit: true))
            } else {
                focalPoints.append(point)
            }
        }
        if focalPoints.isEmpty {
            let horizontal: Double = [.left: 0, .center: 0.5, .right: 1][path.horizontalAlign] ?? 0.5
            let vertical: Double = [.top: 0, .middle: 0.5, .bottom: 1][path.verticalAlign] ?? 0.5
            focalPoints = [FocalPoint(x: Int(Double(width) * horizontal), y: Int(Double(height) * vertical), weight: 1)]
        }
        if let fitIn = path.fitIn {
            fit(fitIn, width: width, height: height, requestWidth: requestWidth, requestHeight: requestHeight)
        } else {
            cropAndResize(width: width, height: height, keepsRatio: !stretch)
        }
    }

    /// A side as a number of pixels, `orig` as the image's own.
    private static func value(_ side: ThumborPath.Side, own: Int) -> Int {
        if case .pixels(let pixels) = side { return pixels }
        return own
    }

    /// Crop mode: cut the image to the target's aspect ratio around the
    /// focal points' centre of mass (unless `stretch()` leaves the ratio
    /// to the resize), then resize to the target, enlarging if need be.
    private mutating func cropAndResize(width: Int, height: Int, keepsRatio: Bool) {
        var (width, height) = (width, height)
        let (tw, th) = (max(targetWidth, 1), max(targetHeight, 1))
        func twoDecimals(_ value: Double) -> Double { (value * 100).rounded(.toNearestOrEven) / 100 }
        let totalWeight = focalPoints.reduce(0) { $0 + $1.weight }
        let focusX = (focalPoints.reduce(0) { $0 + Double($1.x) * $1.weight } / totalWeight).rounded(.down)
        let focusY = (focalPoints.reduce(0) { $0 + Double($1.y) * $1.weight } / totalWeight).rounded(.down)
        if keepsRatio, twoDecimals(Double(width) / Double(height)) != twoDecimals(tw / th) {
            // At least a pixel: thumbor crops to nothing at extreme ratios (10000x1) and resizes that to black.
            let (cropWidth, cropHeight) =
                tw / Double(width) > th / Double(height)
                ? (width, max(1, Int((Double(width) * th / tw).rounded(.toNearestOrEven))))
                : (min(width, max(1, Int((tw * Double(height) / th).rounded(.up)))), height)
            let left = Int(min(max(focusX - Double(cropWidth) / 2, 0), Double(width - cropWidth)).rounded(.toNearestOrEven))
            let top = Int(min(max(focusY - Double(cropHeight) / 2, 0), Double(height - cropHeight)).rounded(.toNearestOrEven))
            let right = min(left + cropWidth, width)
            let bottom = min(top + cropHeight, height)
            operations.append(.crop(left: left, top: top, right: right, bottom: bottom))
            (width, height) = (right - left, bottom - top)
        }
        let target = (Int(tw), Int(th))
        if target != (width, height) {
            operations.append(.resize(width: target.0, height: target.1))
            (width, height) = target
        }
        size = ImageSize(width: width, height: height)
    }

    /// fit-in: the largest size inside the box (never enlarged), or with
    /// `full-` the smallest that covers it (enlarged if need be); with
    /// `adaptive-` the box turned to the image's orientation first.
    private mutating func fit(
        _ fitIn: ThumborPath.FitIn, width: Int, height: Int, requestWidth: ThumborPath.Side, requestHeight: ThumborPath.Side
    ) {
        var (tw, th) = (max(targetWidth, 1), max(targetHeight, 1))
        var (askedWidth, askedHeight) = (requestWidth, requestHeight)
        if fitIn.isAdaptive, (width < height && tw > th) || (width > height && tw < th) {
            (tw, th) = (th, tw)
            (askedWidth, askedHeight) = (askedHeight, askedWidth)
            (targetWidth, targetHeight) = (targetHeight, targetWidth)
            (requestedWidth, requestedHeight) = (requestedHeight, requestedWidth)
        }
        size = ImageSize(width: width, height: height)
        if !fitIn.isFull, tw >= Double(width), th >= Double(height) { return }
        let sign: Double = fitIn.isFull ? -1 : 1
        let (resizedWidth, resizedHeight) =
            Double(width) / tw * sign >= Double(height) / th * sign
            ? (Int(tw), Int((Double(height) * tw / Double(width) + 1e-5).rounded(.toNearestOrEven)))
            : (Int((Double(width) * th / Double(height) + 1e-5).rounded(.toNearestOrEven)), Int(th))
        requestedWidth = max(Self.value(askedWidth, own: width), resizedWidth)
        requestedHeight = max(Self.value(askedHeight, own: height), resizedHeight)
        targetHeight = Double(resizedHeight)
        targetWidth = Double(resizedWidth)
        let resized = (max(resizedWidth, 1), max(resizedHeight, 1))
        if resized != (width, height) {
            operations.append(.resize(width: resized.0, height: resized.1))
            size = ImageSize(width: resized.0, height: resized.1)
        }
    }
}
