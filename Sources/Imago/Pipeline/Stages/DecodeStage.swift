import Foundation

/// Bytes to an image: the format sniffed, the first decoder that handles
/// it, scaled toward the request's target size (where the format allows,
/// while decoding), within the pipeline's pixel and frame limits. Runs on
/// a decode thread; gives freed memory back after a large image.
struct DecodeStage {
    let options: ImageDecodingOptions
    let decoders: [any ImageDecoding]

    /// The stage for `request` in `pipeline`; `scaled: false` decodes at the
    /// stored size (a processed image is the result as it is).
    init(_ request: ImageRequest, pipeline: ImagePipeline, scaled: Bool = true) {
        let configuration = pipeline.configuration
        options = ImageDecodingOptions(
            targetSize: scaled ? request.targetSize : nil,
            contentMode: request.contentMode,
            maximumPixelCount: configuration.maximumPixelCount,
            maximumFrameCount: configuration.maximumFrameCount,
            prefersEmbeddedThumbnail: request.prefersEmbeddedThumbnail,
            convertsToSRGB: request.convertsToSRGB,
            page: request.page
        )
        decoders = configuration.decoders
    }

    func run(_ data: Data) -> Result<Image, ImagePipeline.RenderFailure> {
        defer { ImagePipeline.releaseFreedMemory(afterDecoding: data.count) }
        do {
            return .success(try ImagePipeline.decode(data, options: options, decoders: decoders))
        } catch {
            return .failure(.decoding(error))
        }
    }
}

/// The request's processors over a decoded image, in order; the first that
/// returns no image fails the stage, named by its identifier.
struct ProcessStage {
    let processors: [any ImageProcessing]

    init(_ processors: [any ImageProcessing]) {
        self.processors = processors
    }

    func run(_ image: Image) -> Result<Image, ImagePipeline.RenderFailure> {
        var image = image
        for processor in processors {
            guard let processed = processor.process(image) else { return .failure(.processing(processor.identifier)) }
            image = processed
        }
        return .success(image)
    }
}
