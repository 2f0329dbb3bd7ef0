import Foundation

/// An 8-bit sRGB colour with straight (not premultiplied) alpha: the
/// background of ``ImageProcessors/Embed`` and ``ImageProcessors/Flatten``,
/// the border colour of ``Image/trimmedBounds(threshold:background:equalHorizontal:equalVertical:)``.
///
/// ```swift
/// let orange = Color(red: 255, green: 136, blue: 0)
/// print(orange)  // #ff8800
/// ```
public struct Color: Sendable, Hashable, CustomStringConvertible {
    /// Red, 0-255.
    public var red: UInt8
    /// Green, 0-255.
    public var green: UInt8
    /// Blue, 0-255.
    public var blue: UInt8
    /// Alpha, 0 (transparent) to 255 (opaque).
    public var alpha: UInt8

    /// Creates a colour, opaque unless `alpha` says otherwise.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque white.
    public static let white = Color(red: 255, green: 255, blue: 255)
    /// Opaque black.
    public static let black = Color(red: 0, green: 0, blue: 0)
    /// Fully transparent black, (0, 0, 0, 0).
    public static let transparent = Color(red: 0, green: 0, blue: 0, alpha: 0)

    /// Lowercase hex, `#rrggbb`, with `aa` appended when the colour is not
    /// opaque (`#ff880080`): what processors' identifiers, which are cache
    /// keys, spell a colour with. The two lengths never collide.
    public var description: String {
        let digits = Array("0123456789abcdef")
        var text = "#"
        for byte in alpha == 255 ? [red, green, blue] : [red, green, blue, alpha] {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// Whether red, green and blue are equal: the colour is a shade of gray
    /// and fits a gray image without turning it into colour.
    var isGray: Bool { red == green && green == blue }
}
