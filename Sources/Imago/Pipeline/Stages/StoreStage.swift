import Foundation
import Logging

/// What a decoded image leaves behind: the downloaded data on disk (by the
/// first waiter to decode it, and only if it decoded, so that undecodable
/// data never lands there), the processed image encoded where the
/// configuration keeps those, and the image in memory unless it is stale.
/// Runs on a decode thread, in the same job as the decode.
struct StoreStage {
    private let pipeline: ImagePipeline
    private let request: ImageRequest

    init(_ request: ImageRequest, pipeline: ImagePipeline) {
        self.pipeline = pipeline
        self.request = request
    }

    /// Stores fetched data that is fresh and storable, if this waiter takes
    /// the right to; data that decodes is kept even if a processor failed on it.
    func storeOnDisk(_ fetched: FetchedData, decoded: Result<Image, ImagePipeline.RenderFailure>) {
        guard let metadata = fetched.metadata, !fetched.freshness.isStale else { return }
        let configuration = pipeline.configuration
        let storesOriginal = configuration.diskStorage.contains(.originalData) || request.imageKey.isOriginal
        if !decoded.isDecodingFailure, storesOriginal, request.cachePolicy.write.contains(.disk), let dataCache = configuration.dataCache,
            fetched.storeClaim.take()
        {
            Self.store(fetched.data, metadata: metadata, forKey: DiskKey.data(request.cacheKey), in: dataCache, logger: pipeline.logger)
        }
        Self.processedImageStore(for: request, in: pipeline)?.store(decoded, metadata: metadata, logger: pipeline.logger)
    }

    /// The fetch's outcome: the image, stored in memory unless stale (so
    /// that the next request looks again); or the failure, typed by stage,
    /// with disk data that does not decode removed, as it would fail again.
    func result(
        _ decoded: Result<Image, ImagePipeline.RenderFailure>, source: ImageResponse.Source, freshness: ImageResponse.Freshness,
        dataCount: Int, timings: ImageResponse.Timings
    ) -> Result<FetchedImage, ImagePipeline.Error> {
        let name = request.url?.absoluteString ?? request.cacheKey
        let logger = pipeline.logger
        switch decoded {
        case .failure(.decoding(let error)):
            logger.debug("decoding failed", metadata: ["key": "\(request.cacheKey)", "error": "\(error)"])
            if source == .disk, let dataCache = pipeline.configuration.dataCache {
                Self.remove(DiskKey.data(request.cacheKey), from: dataCache, logger: logger)
            }
            return .failure(.decodingFailed(key: name, underlying: error))
        case .failure(.processing(let processor)):
            // The data is fine (another request may process it differently): it stays stored.
            logger.debug("processing failed", metadata: ["key": "\(request.cacheKey)", "processor": "\(processor)"])
            return .failure(.processingFailed(key: name, processor: processor))
        case .success(let image):
            if request.cachePolicy.write.contains(.memory), !freshness.isStale {
                pipeline.configuration.imageCache?.store(image, forKey: request.imageKey)
            }
            return .success(FetchedImage(image: image, source: source, freshness: freshness, dataCount: dataCount, timings: timings))
        }
    }

    /// Where a request's processed image is kept on disk, if the
    /// configuration keeps processed images and the request has any.
    static func processedImageStore(for request: ImageRequest, in pipeline: ImagePipeline) -> ProcessedImageStore? {
        let configuration = pipeline.configuration
        guard configuration.diskStorage.contains(.processedImages), request.cachePolicy.write.contains(.disk),
            let dataCache = configuration.dataCache, !request.imageKey.isOriginal
        else { return nil }
        return ProcessedImageStore(key: DiskKey.processedImage(request.imageKey), encoder: configuration.processedImageEncoder, dataCache: dataCache)
    }

    /// Stores data; a failure is logged, not fatal to the load.
    static func store(_ data: Data, metadata: Data, forKey key: String, in dataCache: any DataCaching, logger: Logger) {
        do {
            try dataCache.storeData(data, metadata: metadata, forKey: key)
        } catch {
            logger.warning("storing to the disk cache failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    /// Removes stored data; a failure is logged.
    static func remove(_ key: String, from dataCache: any DataCaching, logger: Logger) {
        do {
            try dataCache.removeData(forKey: key)
        } catch {
            logger.warning("removing data from the disk cache failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }
}

/// Writes a request's processed image to the disk tier, encoded, under its
/// image key, with the original's HTTP metadata (so it ages with it).
struct ProcessedImageStore: Sendable {
    let key: String
    let encoder: any ImageEncoding
    let dataCache: any DataCaching

    /// Stores a successful, still (not animated) result.
    func store(_ result: Result<Image, ImagePipeline.RenderFailure>, metadata: Data, logger: Logger) {
        guard case .success(let image) = result, image.animation == nil else { return }
        do {
            try dataCache.storeData(try encoder.encode(image), metadata: metadata, forKey: key)
        } catch {
            logger.warning("storing a processed image failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }
}
