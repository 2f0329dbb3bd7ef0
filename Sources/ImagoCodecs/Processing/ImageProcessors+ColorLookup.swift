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
