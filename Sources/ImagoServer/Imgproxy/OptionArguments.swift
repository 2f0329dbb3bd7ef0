import Foundation
import ImagoCodecs

/// An option's arguments, with imgproxy's rules for reading each kind.
struct OptionArguments {
    let option: ProcessingOptions.Option
    let values: [String]

    init(_ option: ProcessingOptions.Option) {
        self.option = option
        values = option.arguments
    }

    private init(option: ProcessingOptions.Option, values: [String]) {
        self.option = option
        self.values = values
    }

    var count: Int { values.count }

    subscript(index: Int) -> String { values[index] }

    func dropFirst(_ count: Int = 1) -> OptionArguments { OptionArguments(option: option, values: Array(values.dropFirst(count))) }

    func error(_ reason: String) -> OptionError { OptionError(option: option.description, reason: reason) }

    func count(_ allowed: ClosedRange<Int>) throws(OptionError) {
        guard allowed.contains(values.count) else {
            let expected = allowed.lowerBound == allowed.upperBound ? "\(allowed.lowerBound)" : "\(allowed.lowerBound) to \(allowed.upperBound)"
            throw error("expected \(expected) argument\(allowed.upperBound == 1 ? "" : "s"), got \(values.count)")
        }
    }

    /// A boolean as Go's `strconv.ParseBool` reads it; anything else is
    /// false, as imgproxy takes it.
    func bool(_ index: Int) -> Bool { ["1", "t", "T", "true", "TRUE", "True"].contains(values[index]) }

    func integer(_ index: Int, in range: ClosedRange<Int>) throws(OptionError) -> Int {
        guard let value = Int(values[index]), range.contains(value) else {
            throw error("expected a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(values[index])\"")
        }
        return value
    }

    func dimension(_ index: Int) throws(OptionError) -> Int { try integer(index, in: 0...ProcessingOptions.largestSide) }

    // The one argument of options that take one, read as each kind.
    func onlyBool() throws(OptionError) -> Bool {
        try count(1...1)
        return bool(0)
    }

    func onlyDimension() throws(OptionError) -> Int {
        try count(1...1)
        return try dimension(0)
    }

    func onlyInteger(in range: ClosedRange<Int>) throws(OptionError) -> Int {
        try count(1...1)
        return try integer(0, in: range)
    }

    func onlyNumber(where isValid: (Double) -> Bool, _ expected: String) throws(OptionError) -> Double {
        try count(1...1)
        return try number(0, where: isValid, expected)
    }

    func onlyResizingType() throws(OptionError) -> ProcessingOptions.ResizingType {
        try count(1...1)
        return try resizingType(0)
    }

    func onlyFormat() throws(OptionError) -> ProcessingOptions.Format {
        try count(1...1)
        return try format(0)
    }

    func number(_ index: Int, where isValid: (Double) -> Bool, _ expected: String) throws(OptionError) -> Double {
        guard let value = Double(values[index]), value.isFinite, isValid(value) else { throw error("expected \(expected), got \"\(values[index])\"") }
        return value
    }

    func resizingType(_ index: Int) throws(OptionError) -> ProcessingOptions.ResizingType {
        guard let type = ProcessingOptions.ResizingType(rawValue: values[index]) else {
            throw error("expected fit, fill, fill-down, force or auto, got \"\(values[index])\"")
        }
        return type
    }

    func format(_ index: Int) throws(OptionError) -> ProcessingOptions.Format {
        guard let format = ProcessingOptions.Format(name: values[index]) else { throw error("unknown format \"\(values[index])\"") }
        return format
    }

    /// Which anchors an option takes.
    enum GravityUse {
        case crop, extend, watermark

        func allows(_ anchor: ProcessingOptions.Gravity.Anchor) -> Bool {
            switch anchor {
            case .smart: self == .crop
            case .focusPoint: self != .watermark
            case .replicate: self == .watermark
            default: true
            }
        }
    }

    /// A gravity from the arguments at `start` on: the anchor, then x and
    /// y offsets (for a focus point, both required and within 0...1; for
    /// `sm`, none).
    func gravity(from start: Int, allowing use: GravityUse) throws(OptionError) -> ProcessingOptions.Gravity {
        guard start < count, let anchor = ProcessingOptions.Gravity.Anchor(rawValue: values[start]), use.allows(anchor) else {
            throw error("unknown gravity \"\(start < count ? values[start] : "")\"")
        }
        let offsets = count - start - 1
        switch anchor {
        case .smart where offsets > 0: throw error("sm takes no offsets")
        case .focusPoint where offsets != 2: throw error("fp takes x and y, each from 0 to 1")
        default: guard offsets <= 2 else { throw error("a gravity takes at most x and y offsets") }
        }
        var gravity = ProcessingOptions.Gravity(anchor)
        let bound = Double(ProcessingOptions.largestSide)
        let isValid: (Double) -> Bool = anchor == .focusPoint ? { (0...1).contains($0) } : { abs($0) <= bound }
        let expected = anchor == .focusPoint ? "a fraction from 0 to 1" : "an offset"
        if offsets > 0 { gravity.x = try number(start + 1, where: isValid, expected) }
        if offsets > 1 { gravity.y = try number(start + 2, where: isValid, expected) }
        return gravity
    }

    /// `ex` and `exar`: on or off, then the gravity (kept from before when absent).
    func extend(_ extend: inout ProcessingOptions.Extend) throws(OptionError) {
        try count(1...4)
        extend.isEnabled = bool(0)
        if count > 1 { extend.gravity = try gravity(from: 1, allowing: .extend) }
    }

    /// Padding as CSS writes it: all sides, then right and left, bottom,
    /// left; an empty argument keeps what was there.
    func padding(_ padding: inout ProcessingOptions.Padding) throws(OptionError) {
        try count(1...4)
        if !values[0].isEmpty {
            let all = try dimension(0)
            padding = ProcessingOptions.Padding(top: all, right: all, bottom: all, left: all)
        }
        if count > 1, !values[1].isEmpty {
            padding.right = try dimension(1)
            padding.left = padding.right
        }
        if count > 2, !values[2].isEmpty { padding.bottom = try dimension(2) }
        if count > 3, !values[3].isEmpty { padding.left = try dimension(3) }
    }

    /// `t`: threshold, then colour and equal sides (kept from before when empty).
    func trim(_ trim: inout ProcessingOptions.Trim) throws(OptionError) {
        try count(1...4)
        trim.threshold = try number(0, where: { $0 >= 0 && $0 <= 255 }, "a threshold from 0 to 255")
        trim.isEnabled = true
        if count > 1, !values[1].isEmpty { trim.color = try hexColor(1) }
        if count > 2, !values[2].isEmpty { trim.equalHorizontal = bool(2) }
        if count > 3, !values[3].isEmpty { trim.equalVertical = bool(3) }
    }

    /// `bg`: hex, three 0-255 channels, or empty for none (the colour is
    /// kept for formats without alpha, as imgproxy keeps it).
    func background(flatten: inout Bool, color: inout Color) throws(OptionError) {
        switch count {
        case 1 where values[0].isEmpty: flatten = false
        case 1:
            color = try hexColor(0)
            flatten = true
        case 3:
            let channels = try (0..<3).map { index throws(OptionError) in UInt8(try integer(index, in: 0...255)) }
            color = Color(red: channels[0], green: channels[1], blue: channels[2])
            flatten = true
        default: throw error("expected a hex colour or red:green:blue")
        }
    }

    /// A colour as `rgb` or `rrggbb` hex digits.
    func hexColor(_ index: Int) throws(OptionError) -> Color {
        guard let color = Color(hexDigits: values[index], allowingAlpha: false) else { throw error("expected a colour as 3 or 6 hex digits") }
        return color
    }

    /// `wm`: opacity, position, x and y offsets, scale (each kept from
    /// before when empty).
    func watermark(_ watermark: inout ProcessingOptions.Watermark) throws(OptionError) {
        try count(1...7)
        watermark.opacity = try number(0, where: { (0...1).contains($0) }, "an opacity from 0 to 1")
        watermark.isEnabled = watermark.opacity > 0
        if count > 1, !values[1].isEmpty {
            guard let anchor = ProcessingOptions.Gravity.Anchor(rawValue: values[1]), GravityUse.watermark.allows(anchor) else {
                throw error("unknown watermark position \"\(values[1])\"")
            }
            watermark.position.anchor = anchor
        }
        let bound = Double(ProcessingOptions.largestSide)
        if count > 2, !values[2].isEmpty { watermark.position.x = try number(2, where: { abs($0) <= bound }, "an offset") }
        if count > 3, !values[3].isEmpty { watermark.position.y = try number(3, where: { abs($0) <= bound }, "an offset") }
        if count > 4, !values[4].isEmpty { watermark.scale = try number(4, where: { $0 >= 0 && $0 <= 100 }, "a scale of 0 or more") }
    }
}
