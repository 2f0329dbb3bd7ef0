import Foundation
import Synchronization

@testable import Imago

/// An encoder that records the thread it ran on and the size it was given,
/// writes those as its bytes, or fails when asked to.
final class MockImageEncoder: ImageEncoding {
    let fails: Bool
    private let threads = Mutex<[String]>([])

    init(fails: Bool = false) {
        self.fails = fails
    }

    var format: ImageFormat { .unknown }

    /// The names of the threads `encode` ran on, in order.
    var encodingThreads: [String] { threads.withLock { $0 } }

    func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        threads.withLock { $0.append(Thread.current.name ?? "") }
        if fails { throw ImageEncodingError(format: .unknown, detail: "asked to fail") }
        return Data("\(image.width)x\(image.height)".utf8)
    }
}
