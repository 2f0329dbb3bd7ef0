import Foundation
import ImagoConcurrency

@testable import Imago
@testable import ImagoCaching

/// Adds `amount` to every pixel byte (so a test can tell it ran, and how
/// often), counting its calls; fails when `fails` is set.
final class MockImageProcessor: ImageProcessing {
    let amount: UInt8
    let fails: Bool
    private let calls = Locked(0)

    init(amount: UInt8 = 1, fails: Bool = false) {
        self.amount = amount
        self.fails = fails
    }

    var callCount: Int { calls.withLock { $0 } }

    var identifier: String { "mock(\(amount)\(fails ? ",fails" : ""))" }

    func process(_ image: Image) -> Image? {
        calls.withLock { $0 += 1 }
        guard !fails else { return nil }
        return Image(width: image.width, height: image.height, pixelFormat: image.pixelFormat, pixels: image.pixels.map { $0 &+ amount })
    }
}
