import ImagoCodecs

extension ProcessingOptions {
    /// The model's effects these options ask for, in the order imgproxy
    /// applies them: blur, sharpen, pixelate, then Imago's gray and rounded
    /// corners (whose radius the dpr scales, by `dprScale`, the part of it
    /// that still applies), then the ``adjustments``.
    func effects(dprScale: Double) -> [Effect] {
        var effects: [Effect] = []
        if blur > 0 { effects.append(.blur(sigma: blur)) }
        if sharpen > 0 { effects.append(.sharpen(sigma: sharpen)) }
        if pixelate > 1 { effects.append(.pixelate(blockSize: pixelate)) }
        if grayscale { effects.append(.grayscale(grayscaleWeights)) }
        if cornerRadius > 0 { effects.append(.roundedCorners(radius: Double(cornerRadius) * dprScale, background: nil)) }
        return effects + Effect.Kind.allCases.compactMap { adjustments[$0] }
    }
}

extension OptionArguments {
    /// One of ``ProcessingOptions/adjustments``: the model's operation the
    /// option names, its arguments read as thumbor's filter of that name
    /// reads them (`sa` as imgproxy Pro's `saturation`, a factor), or nil
    /// for `imago_equalize:0`.
    func adjustment() throws(OptionError) -> (Effect.Kind, Effect?) {
        switch option.name {
        case "saturation", "sa":
            return (.saturation, .saturation(factor: try onlyNumber(where: { $0 >= 0 && $0 <= 100 }, "a factor from 0 to 100")))
        case "imago_brightness": return (.brightness, .brightness(percent: try onlyInteger(in: -1_000...1_000)))
        case "imago_contrast": return (.contrast, .contrast(percent: try onlyInteger(in: -100...1_000)))
        case "imago_rgb":
            try count(3...3)
            let range = -1_000...1_000
            return (
                .channelOffsets, .channelOffsets(red: try integer(0, in: range), green: try integer(1, in: range), blue: try integer(2, in: range))
            )
        case "imago_noise":
            try count(1...2)
            let seed = count > 1 ? try integer(1, in: 0...Int(UInt32.max)) : 0
            return (.noise, .noise(amount: try integer(0, in: 0...1_000), seed: UInt64(seed)))
        case "imago_equalize": return (.equalize, try onlyBool() ? .equalize : nil)
        case "imago_convolution":
            try count(2...3)
            let columns = try integer(1, in: 1...Effect.largestKernel)
            guard let convolution = Effect.convolution(weights: values[0], columns: columns, normalizes: count < 3 || bool(2)) else {
                throw error(Effect.kernelRule)
            }
            return (.convolution, convolution)
        case "imago_curve":
            try count(4...4)
            let curves = values.map { curve in
                curve.split(separator: ";").map { point in
                    point.split(separator: ",", omittingEmptySubsequences: false).compactMap { UInt8($0) }
                }
            }
            guard curves.allSatisfy({ $0.allSatisfy { $0.count == 2 } }) else { throw error("a curve is x,y;x,y;… of numbers from 0 to 255") }
            let points = curves.map { $0.map { Effect.Point(x: $0[0], y: $0[1]) } }
            guard ImageProcessors.ColorLookup.curve(all: points[0], red: points[1], green: points[2], blue: points[3]) != nil else {
                throw error("each curve needs a point, its x increasing")
            }
            return (.curve, .curve(all: points[0], red: points[1], green: points[2], blue: points[3]))
        case "imago_colorize":
            try count(4...4)
            guard values[3].count == 6 else { throw error("the fill is six hex digits") }
            let fill = try hexColor(3)
            return (
                .colorize,
                .colorize(red: try integer(0, in: 0...100), green: try integer(1, in: 0...100), blue: try integer(2, in: 0...100), fill: fill)
            )
        default: throw error("unknown option")
        }
    }
}
