import ImagoCodecs

/// A pixel operation of the processing model, done to the image once it is
/// laid out, whichever URL language asked for it. imgproxy's options and
/// thumbor's filters map their spellings onto these cases, so that an
/// operation is written once and each language only names it.
enum Effect: Sendable, Hashable {
    /// Gaussian blur; `sigma` in pixels.
    case blur(sigma: Double)
    /// Unsharp masking; `sigma` in pixels.
    case sharpen(sigma: Double)
    /// Squares of `blockSize` pixels, each one colour.
    case pixelate(blockSize: Int)
    /// Gray, by a standard's luma weights.
    case grayscale(ImageProcessors.Grayscale.Weights)
    /// Every colour channel moved by `percent` of full scale.
    case brightness(percent: Int)
    /// Colour channels moved away from (or toward) mid-gray by `percent`.
    case contrast(percent: Int)
    /// Each colour channel moved by its own percent of full scale.
    case channelOffsets(red: Int, green: Int, blue: Int)
    /// Random noise of `amount` percent, the same for the same `seed`.
    case noise(amount: Int, seed: UInt64)
    /// Corners rounded to `radius` pixels; outside them transparent, or
    /// `background` where a colour is given.
    case roundedCorners(radius: Double, background: Color?)
    /// Quarter turns, clockwise; negative for counter-clockwise.
    case rotate(quarterTurns: Int)
    /// Transparent pixels filled with `background`.
    case flatten(background: Color)
    /// Colour away from (above 1) or toward (below 1) gray.
    case saturation(factor: Double)
    /// Each colour channel's histogram spread over the whole range.
    case equalize
    /// A convolution kernel over every channel.
    case convolution(ImageProcessors.Convolution)
    /// Tone curves: each channel's, then one for all three.
    case curve(all: [Point], red: [Point], green: [Point], blue: [Point])
    /// Each colour channel blended toward `fill` by its own percent.
    case colorize(red: Int, green: Int, blue: Int, fill: Color)

    typealias Point = ImageProcessors.ColorLookup.Point

    /// The operation without its parameters: a test checks that each URL
    /// language spells every one.
    enum Kind: CaseIterable {
        case blur, sharpen, pixelate, grayscale, brightness, contrast, channelOffsets, noise, roundedCorners, rotate, flatten
        case saturation, equalize, convolution, curve, colorize
    }

    var kind: Kind {
        switch self {
        case .blur: .blur
        case .sharpen: .sharpen
        case .pixelate: .pixelate
        case .grayscale: .grayscale
        case .brightness: .brightness
        case .contrast: .contrast
        case .channelOffsets: .channelOffsets
        case .noise: .noise
        case .roundedCorners: .roundedCorners
        case .rotate: .rotate
        case .flatten: .flatten
        case .saturation: .saturation
        case .equalize: .equalize
        case .convolution: .convolution
        case .curve: .curve
        case .colorize: .colorize
        }
    }

    /// The image with the operation done; nil when it cannot be done (a
    /// size the image cannot take).
    func apply(to image: Image) -> Image? {
        switch self {
        case .blur(let sigma): return ImageProcessors.GaussianBlur(radius: 2 * sigma).process(image)
        case .sharpen(let sigma): return ImageProcessors.Sharpen(sigma: sigma).process(image)
        case .pixelate(let blockSize): return blockSize > 1 ? ImageProcessors.Pixelate(size: blockSize).process(image) : image
        case .grayscale(let weights): return ImageProcessors.Grayscale(weights: weights).process(image)
        case .brightness(let percent): return ImageProcessors.ColorLookup.brightness(percent).process(image)
        case .contrast(let percent): return ImageProcessors.ColorLookup.contrast(percent).process(image)
        case .channelOffsets(let red, let green, let blue):
            return ImageProcessors.ColorLookup.offsets(red: red, green: green, blue: blue).process(image)
        case .noise(let amount, let seed): return ImageProcessors.Noise(amount: amount, seed: seed).process(image)
        case .roundedCorners(let radius, let background):
            guard let rounded = ImageProcessors.RoundedCorners(radius: radius).process(image) else { return nil }
            return background.map { ImageProcessors.Flatten(background: $0).process(rounded) } ?? rounded
        case .rotate(let quarterTurns): return ImageProcessors.Rotate(quarterTurns: quarterTurns).process(image)
        case .flatten(let background): return ImageProcessors.Flatten(background: background).process(image)
        case .saturation(let factor): return ImageProcessors.Saturation(factor: factor).process(image)
        case .equalize: return ImageProcessors.Equalize().process(image)
        case .convolution(let convolution): return convolution.process(image)
        case .curve(let all, let red, let green, let blue):
            return ImageProcessors.ColorLookup.curve(all: all, red: red, green: green, blue: blue)?.process(image) ?? image
        case .colorize(let red, let green, let blue, let fill):
            return ImageProcessors.ColorLookup.colorize(red: red, green: green, blue: blue, fill: fill).process(image)
        }
    }
}

extension Effect {
    /// The most weights a convolution kernel may have (11x11): each is a
    /// multiplication per pixel and channel.
    static let largestKernel = 121

    /// What a convolution kernel must be, for both languages' errors.
    static let kernelRule = "the kernel is up to \(largestKernel) numbers split by ;, in an odd number of rows of an odd number of columns"

    /// A convolution by `weights`, numbers split by `;` row by row, in
    /// rows of `columns`; nil when the kernel breaks ``kernelRule``.
    static func convolution(weights text: some StringProtocol, columns: Int, normalizes: Bool) -> Effect? {
        let items = text.split(separator: ";", omittingEmptySubsequences: false)
        let weights = items.compactMap { Double($0) }
        guard weights.count == items.count, weights.count <= largestKernel,
            let convolution = ImageProcessors.Convolution(weights: weights, columns: columns, normalizes: normalizes)
        else { return nil }
        return .convolution(convolution)
    }
}
