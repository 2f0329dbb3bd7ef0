import ImagoCodecs

extension ThumborFilter {
    /// The model's effect this filter names, as thumbor 7.8 does it; nil
    /// for a filter that is no pixel operation of its own (the answer's
    /// settings, the layout's, and the filters that depend on the plan),
    /// or that thumbor makes do nothing (a rotation by other than whole
    /// quarter turns, a sharpen of amount 0).
    var effect: Effect? {
        switch self {
        case .blur(_, let sigma): return .blur(sigma: sigma)
        case .sharpen(let amount, let radius, _): return amount > 0 ? .sharpen(sigma: max(0.5, radius)) : nil
        case .grayscale: return .grayscale(.rec601)
        case .brightness(let percent): return .brightness(percent: percent)
        case .contrast(let percent): return .contrast(percent: percent)
        case .rgb(let red, let green, let blue): return .channelOffsets(red: red, green: green, blue: blue)
        case .noise(let amount, let seed): return .noise(amount: amount, seed: UInt64(seed))
        case .rotate(let degrees):
            // thumbor turns counter-clockwise, and only by whole quarter turns.
            return degrees % 90 == 0 ? .rotate(quarterTurns: -degrees / 90) : nil
        case .roundCorner(let horizontal, let vertical, let red, let green, let blue, let transparent):
            let background = Color(red: UInt8(red), green: UInt8(green), blue: UInt8(blue))
            return .roundedCorners(radius: Double(min(horizontal, vertical)), background: transparent ? nil : background)
        case .effect(let effect): return effect
        case .backgroundColor(.color(let name)): return Color(cssName: name).map { .flatten(background: $0) }
        default: return nil
        }
    }
}
