import Foundation

extension ImageProcessors {
    /// Each colour channel mapped through its own table of 256 values:
    /// brightness, contrast and per-channel offsets, with thumbor's integer
    /// arithmetic. Alpha is kept. A gray image stays gray when the three
    /// tables agree, and becomes RGB when they do not.
    public struct ColorLookup: ImageProcessing, Hashable {
        /// What the tables do, for the identifier.
        public var name: String
        public var red: [UInt8]
        public var green: [UInt8]
        public var blue: [UInt8]

        /// A lookup with its three tables; each must have 256 entries.
        public init?(name: String, red: [UInt8], green: [UInt8], blue: [UInt8]) {
            guard red.count == 256, green.count == 256, blue.count == 256 else { return nil }
            self.init(checkedName: name, red: red, green: green, blue: blue)
        }

        private init(checkedName name: String, red: [UInt8], green: [UInt8], blue: [UInt8]) {
            self.name = name
            self.red = red
            self.green = green
            self.blue = blue
        }

        /// `percent` of 255 added to each colour channel (truncated toward
        /// zero, then clamped), as thumbor's `brightness()`.
        public static func brightness(_ percent: Int) -> ColorLookup {
            offsets(red: percent, green: percent, blue: percent, name: "brightness(\(percent))")
        }

        /// Each channel's percent of 255 added to it, as thumbor's `rgb()`.
        public static func offsets(red: Int, green: Int, blue: Int) -> ColorLookup {
            offsets(red: red, green: green, blue: blue, name: "rgb(\(red),\(green),\(blue))")
        }

        private static func offsets(red: Int, green: Int, blue: Int, name: String) -> ColorLookup {
            func table(_ percent: Int) -> [UInt8] {
                let delta = clamped(255 * clamped(percent, -1_000, 1_000) / 100, -255, 255)
                return (0..<256).map { UInt8(clamped($0 + delta, 0, 255)) }
            }
            return ColorLookup(checkedName: name, red: table(red), green: table(green), blue: table(blue))
        }

        /// Contrast changed by `percent` (-100 flattens to mid-gray), as
        /// thumbor's `contrast()`: a factor of (percent + 100)² / 100,
        /// truncated, applied around 128.
        public static func contrast(_ percent: Int) -> ColorLookup {
            let shifted = clamped(percent, -100, 1_000) + 100
            let factor = shifted * shifted / 100
            let table = (0..<256).map { UInt8(clamped(factor * ($0 - 128) / 100 + 128, 0, 255)) }
            return ColorLookup(checkedName: "contrast(\(percent))", red: table, green: table, blue: table)
        }

        /// Each colour channel blended toward `fill` by its own percent,
        /// as thumbor's `colorize()`: (value × (100 − p) + fill × p) / 100,
        /// truncated, then clamped.
        public static func colorize(red: Int, green: Int, blue: Int, fill: Color) -> ColorLookup {
            func table(_ percent: Int, _ target: UInt8) -> [UInt8] {
                let weight = Double(clamped(percent, 0, 100))
                return (0..<256).map { UInt8(clamped(Int((Double($0) * (100 - weight) + Double(target) * weight) / 100), 0, 255)) }
            }
            let name = "colorize(\(red),\(green),\(blue),\(fill.red),\(fill.green),\(fill.blue))"
            return ColorLookup(checkedName: name, red: table(red, fill.red), green: table(green, fill.green), blue: table(blue, fill.blue))
        }

        /// Tone curves, as thumbor's `curve()`: each channel through its own
        /// curve, then all three through `all`. A curve is a natural cubic
        /// spline through its points (x strictly increasing, both from 0 to
        /// 255), each value rounded and clamped; before its first point a
        /// curve is its first y, from its last point on its last y. Nil when
        /// a curve has no point or its x do not increase.
        public static func curve(all: [Point], red: [Point], green: [Point], blue: [Point]) -> ColorLookup? {
            guard let allCurve = table(all), let redCurve = table(red), let greenCurve = table(green), let blueCurve = table(blue) else {
                return nil
            }
            let name = "curve(" + [all, red, green, blue].map { $0.map { "\($0.x),\($0.y)" }.joined(separator: ";") }.joined(separator: "|") + ")"
            return ColorLookup(
                checkedName: name, red: redCurve.map { allCurve[Int($0)] }, green: greenCurve.map { allCurve[Int($0)] },
                blue: blueCurve.map { allCurve[Int($0)] })
        }

        /// A point of a tone curve: input `x` gives output `y`.
        public struct Point: Sendable, Hashable {
            public var x: UInt8
            public var y: UInt8

            public init(x: UInt8, y: UInt8) {
                self.x = x
                self.y = y
            }
        }

        /// The 256 values of the spline through `points`.
        private static func table(_ points: [Point]) -> [UInt8]? {
            guard let first = points.first, let last = points.last, zip(points, points.dropFirst()).allSatisfy({ $0.x < $1.x }) else {
                return nil
            }
            let slopes = secondDerivatives(points)
            var table = [UInt8](repeating: first.y, count: 256)
            for (index, (left, right)) in zip(points, points.dropFirst()).enumerated() {
                let span = Double(right.x) - Double(left.x)
                for x in Int(left.x)..<Int(right.x) {
                    let b = (Double(x) - Double(left.x)) / span
                    let a = 1 - b
                    let linear = a * Double(left.y) + b * Double(right.y)
                    let bend = span * span / 6 * ((a * a * a - a) * slopes[index] + (b * b * b - b) * slopes[index + 1])
                    table[x] = UInt8(clamped(Int((linear + bend).rounded()), 0, 255))
                }
            }
            for x in Int(last.x)..<256 { table[x] = last.y }
            return table
        }

        /// The second derivatives of the natural cubic spline through
        /// `points` (zero at both ends), by the tridiagonal system's
        /// elimination (Thomas' algorithm).
        private static func secondDerivatives(_ points: [Point]) -> [Double] {
            let count = points.count
            guard count > 2 else { return [Double](repeating: 0, count: count) }
            let x = points.map { Double($0.x) }
            let y = points.map { Double($0.y) }
            var diagonal = [Double](repeating: 1, count: count)
            var upper = [Double](repeating: 0, count: count)
            var right = [Double](repeating: 0, count: count)
            for i in 1..<(count - 1) {
                let lower = (x[i] - x[i - 1]) / 6
                diagonal[i] = (x[i + 1] - x[i - 1]) / 3 - lower * upper[i - 1] / diagonal[i - 1]
                upper[i] = (x[i + 1] - x[i]) / 6
                right[i] = (y[i + 1] - y[i]) / (x[i + 1] - x[i]) - (y[i] - y[i - 1]) / (x[i] - x[i - 1]) - lower * right[i - 1] / diagonal[i - 1]
            }
            var result = [Double](repeating: 0, count: count)
            for i in stride(from: count - 2, through: 1, by: -1) { result[i] = (right[i] - upper[i] * result[i + 1]) / diagonal[i] }
            return result
        }

        public var identifier: String { "lookup(\(name))" }

        public func process(_ image: Image) -> Image? {
            let isGray = image.pixelFormat == .gray8 || image.pixelFormat == .grayAlpha8
            let source = isGray && (red != green || green != blue) ? image.widened(addingColor: true, addingAlpha: false) : image
            let channels = source.pixelFormat.bytesPerPixel
            let colorChannels = source.pixelFormat.hasAlpha ? channels - 1 : channels
            let tables = colorChannels == 1 ? [red] : [red, green, blue]
            var pixels = source.pixels
            pixels.withUnsafeMutableBufferPointer { buffer in
                for y in 0..<source.height {
                    var index = y * source.bytesPerRow
                    for _ in 0..<source.width {
                        for channel in 0..<colorChannels { buffer[index + channel] = tables[channel][Int(buffer[index + channel])] }
                        index += channels
                    }
                }
            }
            return Image(width: source.width, height: source.height, pixelFormat: source.pixelFormat, bytesPerRow: source.bytesPerRow, pixels: pixels)
        }
    }

    /// The same random offset added to a pixel's colour channels, a new one
    /// for every pixel, from -amount/2 up to amount/2 (thumbor's `noise()`);
    /// from a generator seeded with `seed`, so that the same URL gives the
    /// same bytes. Alpha is kept; gray stays gray.
    public struct Noise: ImageProcessing, Hashable {
        public var amount: Int
        public var seed: UInt64

        public init(amount: Int, seed: UInt64) {
            self.amount = amount
            self.seed = seed
        }

        public var identifier: String { "noise(\(amount),\(seed))" }

        public func process(_ image: Image) -> Image? {
            guard amount > 0 else { return image }
            let channels = image.pixelFormat.bytesPerPixel
            let colorChannels = image.pixelFormat.hasAlpha ? channels - 1 : channels
            // SplitMix64: fast, and the same sequence everywhere.
            var state = seed &+ 0x9E37_79B9_7F4A_7C15
            func next() -> UInt64 {
                state = state &+ 0x9E37_79B9_7F4A_7C15
                var mixed = state
                mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
                mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
                return mixed ^ (mixed >> 31)
            }
            let amount = UInt64(min(self.amount, 1_000))
            var pixels = image.pixels
            pixels.withUnsafeMutableBufferPointer { buffer in
                for y in 0..<image.height {
                    var index = y * image.bytesPerRow
                    for _ in 0..<image.width {
                        let offset = Int(next() % amount) - Int(amount) / 2
                        for channel in 0..<colorChannels {
                            buffer[index + channel] = UInt8(clamped(Int(buffer[index + channel]) + offset, 0, 255))
                        }
                        index += channels
                    }
                }
            }
            return Image(width: image.width, height: image.height, pixelFormat: image.pixelFormat, bytesPerRow: image.bytesPerRow, pixels: pixels)
        }
    }
}

/// `value` within `low...high`.
private func clamped(_ value: Int, _ low: Int, _ high: Int) -> Int { min(max(value, low), high) }
