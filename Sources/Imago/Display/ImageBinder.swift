/// Binds displays to requests: placeholder at once, a memory hit in the same
/// call (no flicker), the loaded image later, a failure image on error, and
/// the last request bound to a display always wins.
///
/// ```swift
/// let binder = ImageBinder(pipeline: .shared, placeholder: gray, failureImage: broken)
/// func configure(_ cell: Cell, with url: URL) {          // on the main actor
///     binder.bind(ImageRequest(url: url), to: cell)      // cancels the cell's previous load
/// }
/// ```
@MainActor
public final class ImageBinder {
    /// The pipeline that loads the images.
    public let pipeline: ImagePipeline
    /// Shown while an image loads, unless a bind call gives its own.
    public var placeholder: Image?
    /// Shown when a load fails, unless a bind call gives its own.
    public var failureImage: Image?

    private struct Binding {
        weak var display: (any ImageDisplaying)?
        let task: ImageTask
        let generation: UInt64
    }

    private var bindings: [ObjectIdentifier: Binding] = [:]
    private var nextGeneration: UInt64 = 0

    /// Creates a binder.
    public init(pipeline: ImagePipeline = .shared, placeholder: Image? = nil, failureImage: Image? = nil) {
        self.pipeline = pipeline
        self.placeholder = placeholder
        self.failureImage = failureImage
    }

    /// Shows `request`'s image on `display`, replacing any earlier binding.
    ///
    /// A memory hit is displayed before this method returns. Otherwise the
    /// placeholder is displayed now and the image (or the failure image) when
    /// the load ends, unless `display` was bound to something else meanwhile.
    /// A `nil` request cancels the display's load and shows the placeholder.
    public func bind(
        _ request: ImageRequest?,
        to display: any ImageDisplaying,
        placeholder: Image? = nil,
        failureImage: Image? = nil
    ) {
        let id = ObjectIdentifier(display)
        let placeholder = placeholder ?? self.placeholder
        let failureImage = failureImage ?? self.failureImage
        if let request, let current = bindings[id], current.display === display,
            current.task.request.imageKey == request.imageKey, !current.task.isFinished
        {
            return  // already loading this very image for this display
        }
        bindings.removeValue(forKey: id)?.task.cancel()
        guard let request else {
            display.display(.placeholder(placeholder))
            return
        }
        switch pipeline.loadImage(request) {
        case .cached(let response):
            display.display(.image(response.image, source: .memory))
        case .inProgress(let task):
            display.display(.placeholder(placeholder))
            nextGeneration += 1
            let generation = nextGeneration
            bindings[id] = Binding(display: display, task: task, generation: generation)
            Task { @MainActor [weak self] in
                let result = await task.result
                self?.complete(id: id, generation: generation, result: result, failureImage: failureImage)
            }
        }
    }

    /// Cancels `display`'s load, if any, and forgets it; what the display
    /// shows is left as it is. For a display about to be reused or leaving
    /// the screen.
    public func unbind(_ display: any ImageDisplaying) {
        bindings.removeValue(forKey: ObjectIdentifier(display))?.task.cancel()
    }

    /// The load running for `display`, if any.
    public func task(for display: any ImageDisplaying) -> ImageTask? {
        bindings[ObjectIdentifier(display)]?.task
    }

    private func complete(id: ObjectIdentifier, generation: UInt64, result: Result<ImageResponse, ImagePipeline.Error>, failureImage: Image?) {
        guard let binding = bindings[id], binding.generation == generation else { return }
        bindings[id] = nil
        guard let display = binding.display else { return }
        switch result {
        case .success(let response):
            display.display(.image(response.image, source: response.source))
        case .failure(let error) where error.isCancellation:
            break
        case .failure(let error):
            display.display(.failure(failureImage, error))
        }
    }
}
