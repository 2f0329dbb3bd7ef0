import Foundation
import Imago
import ImagoTestSupport

/// A photo-like JPEG of about 20 KB (300x225, gradient and 40 seeded discs):
/// the image every throughput benchmark loads, so their figures compare.
public func photoLikeJPEG() throws -> Data {
    var canvas = Canvas(width: 300, height: 225, background: (40, 90, 160))
    canvas.fillVerticalGradient(top: (250, 180, 60), bottom: (20, 40, 120))
    var generator = SeededGenerator(seed: 20)
    for _ in 0..<40 {
        let color = (UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator))
        canvas.fillCircle(centerX: Int.random(in: 0..<300, using: &generator), centerY: Int.random(in: 0..<225, using: &generator),
                          radius: Int.random(in: 5...40, using: &generator), color: color)
    }
    guard let image = canvas.image else { throw CocoaError(.coderInvalidValue) }
    return try JPEGEncoder(quality: 92).encode(image)
}

/// The middle value (the upper one of an even count); 0 for none.
public func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// A duration in seconds.
public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
