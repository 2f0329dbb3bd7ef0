import ImagoCodecs

extension ProcessingOptions {
    /// The model's effects these options ask for, in the order imgproxy
    /// applies them: blur, sharpen, pixelate, then Imago's gray and rounded
    /// corners (whose radius the dpr scales, by `dprScale`, the part of it
    /// that still applies).
    func effects(dprScale: Double) -> [Effect] {
        var effects: [Effect] = []
        if blur > 0 { effects.append(.blur(sigma: blur)) }
        if sharpen > 0 { effects.append(.sharpen(sigma: sharpen)) }
        if pixelate > 1 { effects.append(.pixelate(blockSize: pixelate)) }
        if grayscale { effects.append(.grayscale(.rec709)) }
        if cornerRadius > 0 { effects.append(.roundedCorners(radius: Double(cornerRadius) * dprScale, background: nil)) }
        return effects
    }
}
