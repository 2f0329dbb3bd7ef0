@testable import Imago

/// A display that remembers what it was asked to show.
@MainActor
final class RecordingDisplay: ImageDisplaying {
    private(set) var history: [ImageDisplayContent] = []

    var current: ImageDisplayContent? { history.last }

    func display(_ content: ImageDisplayContent) {
        history.append(content)
    }

    /// The mock image identifier shown now, if an image is shown.
    var shownID: UInt32? {
        if case .image(let image, _) = current { return MockImage.id(of: image) }
        return nil
    }
}
