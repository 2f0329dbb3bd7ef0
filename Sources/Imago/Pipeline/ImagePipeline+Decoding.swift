import Foundation
import Logging
import Synchronization
import Tracing

#if canImport(Glibc)
    import Glibc
#endif

/// Turning fetched bytes into the request's image: decode, scale, process,
/// and keep the processed image on disk where the configuration asks.
extension ImagePipeline {
    /// Hands the pages of freed buffers back to the system after a large
    /// image, at most once every ``freedMemoryInterval``. glibc raises its
    /// mmap threshold each time a large buffer is freed, so later downloads
    /// and decode buffers come from its heaps, which keep their freed pages
    /// and so raise the process's peak memory. Not after every image: each
    /// page handed back is faulted in again by the next download.
    static func releaseFreedMemory(afterDecoding byteCount: Int) {
        #if canImport(Glibc)
            guard byteCount >= 1 << 20, let trim = mallocTrim else { return }
            let now = DispatchTime.now().uptimeNanoseconds
            let last = lastRelease.load(ordering: .relaxed)
            guard now &- last >= freedMemoryInterval,
                lastRelease.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
            else { return }
            _ = trim(0)
        #endif
    }

    /// The least time between two ``releaseFreedMemory(afterDecoding:)`` trims, in nanoseconds.
    static let freedMemoryInterval: UInt64 = 250_000_000
    /// When the last trim ran (uptime nanoseconds).
    private static let lastRelease = Atomic<UInt64>(0)

    /// Trims `cache`, then hands the freed pages back to the system.
    static func trimMemory(_ cache: any ImageCaching, _ trim: MemoryTrim) {
        cache.trimMemory(trim)
        #if canImport(Glibc)
            if let mallocTrim { _ = mallocTrim(0) }
        #endif
    }

    #if canImport(Glibc)
        /// glibc's `malloc_trim`, which the Glibc module does not declare; `nil`
        /// with another C library.
        private static let mallocTrim: (@convention(c) (Int) -> Int32)? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim")
            .map { unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self) }
    #endif

    /// Decodes bytes the caller already holds as `request` asks (its target
    /// size, content mode and processors, with the pipeline's decoders and
    /// limits) on a decode thread. No cache is read or written and nothing
    /// is shared with other requests. `request` names the image in errors
    /// (its URL or key); its data provider is not called.
    public func render(_ data: Data, as request: ImageRequest) async throws(ImagePipeline.Error) -> Image {
        try await render(data, as: request) { image, _ in .success(image) }
    }

    /// Decodes bytes as ``render(_:as:)`` does, then encodes the image with
    /// `encoder` on the same decode thread: for a caller that sends the
    /// image on at once, such as a service answering with a thumbnail,
    /// decoding and encoding cost one hand-off between threads, not three.
    ///
    /// ```swift
    /// let thumbnail = try await pipeline.render(bytes, as: ImageRequest(url: url, targetSize: box), encodedWith: JPEGEncoder(quality: 80))
    /// ```
    public func render(_ data: Data, as request: ImageRequest, encodedWith encoder: any ImageEncoding) async throws(ImagePipeline.Error) -> Data {
        let trace = ServiceContext.current
        return try await render(data, as: request) { image, name in
            TraceSpans.run("encode", in: trace) { () -> Result<Data, ImagePipeline.Error> in
                do throws(ImageEncodingError) {
                    return .success(try encoder.encode(image))
                } catch {
                    return .failure(.encodingFailed(key: name, underlying: error))
                }
            }
        }
    }

    /// Decodes bytes as ``render(_:as:encodedWith:)`` does; when they hold
    /// an animation, runs the request's processors over each of its first
    /// `maximumFrameCount` frames, one frame in memory at a time, and writes
    /// them with `animated`, durations and loop count kept. A still image,
    /// or an animation cut to one frame, is encoded with `still`.
    ///
    /// Called in a trace (``TraceSpans``), it adds the spans `decode`,
    /// `transform` (the processors) and `encode`; for an animation, the
    /// first two are its first frame's, and `encode` covers the others'
    /// decoding and processing too, as they are written one at a time.
    ///
    /// ```swift
    /// let bytes = try await pipeline.render(gif, as: request, encodedWith: PNGEncoder(), animatingWith: WebPEncoder(quality: 75))
    /// ```
    public func render(
        _ data: Data, as request: ImageRequest, encodedWith still: any ImageEncoding, animatingWith animated: any AnimatedImageEncoding,
        maximumFrameCount: Int = .max
    ) async throws(ImagePipeline.Error) -> Data {
        let processing = ProcessStage(request.processors)
        let decoding = DecodeStage(request, pipeline: self)
        let name = request.url?.absoluteString ?? request.cacheKey
        let trace = ServiceContext.current
        let outcome = await withDecodeMemory(for: data, decoding: decoding, request: request) { [decodeThreads] in
            await decodeThreads.run(priority: request.priority) { () -> Result<Data, ImagePipeline.Error> in
                let first: Image
                switch TraceSpans.run("decode", in: trace, { decoding.run(data) }) {
                case .success(let image): first = image
                case .failure(let failure): return .failure(failure.error(key: name))
                }
                let processed: Image
                switch TraceSpans.run("transform", in: trace, { processing.run(first) }) {
                case .success(let image): processed = image
                case .failure(let failure): return .failure(failure.error(key: name))
                }
                return TraceSpans.run("encode", in: trace) { () -> Result<Data, ImagePipeline.Error> in
                    do throws(ImagePipeline.Error) {
                        guard let animation = first.animation, maximumFrameCount > 1 else {
                            do throws(ImageEncodingError) { return .success(try still.encode(processed)) } catch {
                                throw .encodingFailed(key: name, underlying: error)
                            }
                        }
                        return .success(try Self.writeAnimation(animation, first: processed, processing, animated, maximumFrameCount, name))
                    } catch {
                        return .failure(error)
                    }
                }
            }
        }
        return try outcome.get()
    }

    /// The frames of `animation` after the first (already `first`, processed)
    /// processed and written with `encoder`.
    private static func writeAnimation(
        _ animation: ImageAnimation, first: Image, _ processing: ProcessStage, _ encoder: any AnimatedImageEncoding, _ maximumFrameCount: Int,
        _ name: String
    ) throws(ImagePipeline.Error) -> Data {
        func encoding<Value>(_ body: () throws(ImageEncodingError) -> Value) throws(ImagePipeline.Error) -> Value {
            do { return try body() } catch { throw .encodingFailed(key: name, underlying: error) }
        }
        func decoding<Value>(_ body: () throws(ImageDecodingError) -> Value) throws(ImagePipeline.Error) -> Value {
            do { return try body() } catch { throw .decodingFailed(key: name, underlying: error) }
        }
        let writer = try encoding { () throws(ImageEncodingError) in
            try encoder.animationWriter(frameSize: first.size, loopCount: animation.loopCount)
        }
        try encoding { () throws(ImageEncodingError) in try writer.addFrame(first, duration: animation.frameDurations[0]) }
        // A new pass starts at the first frame, which is written already.
        let frames = try decoding { () throws(ImageDecodingError) in try animation.frames() }
        _ = try decoding { () throws(ImageDecodingError) in try frames.next() }
        for index in 1..<min(animation.frameCount, maximumFrameCount) {
            guard let frame = try decoding({ () throws(ImageDecodingError) in try frames.next() }) else { break }
            switch processing.run(frame) {
            case .success(let processed):
                try encoding { () throws(ImageEncodingError) in try writer.addFrame(processed, duration: animation.frameDurations[index]) }
            case .failure(let failure):
                throw failure.error(key: name)
            }
        }
        return try encoding { () throws(ImageEncodingError) in try writer.finish() }
    }

    private func render<Output: Sendable>(
        _ data: Data, as request: ImageRequest, finish: @escaping @Sendable (Image, _ name: String) -> Result<Output, ImagePipeline.Error>
    ) async throws(ImagePipeline.Error) -> Output {
        let name = request.url?.absoluteString ?? request.cacheKey
        let trace = ServiceContext.current
        let decoding = DecodeStage(request, pipeline: self)
        let outcome = await withDecodeMemory(for: data, decoding: decoding, request: request) { [decodeThreads] in
            await decodeThreads.run(priority: request.priority) { () -> Result<Output, ImagePipeline.Error> in
                let decoded = TraceSpans.run("decode", in: trace) { decoding.run(data) }
                switch decoded.flatMap({ image in TraceSpans.run("transform", in: trace) { ProcessStage(request.processors).run(image) } }) {
                case .success(let image): return finish(image, name)
                case .failure(let failure): return .failure(failure.error(key: name))
                }
            }
        }
        return try outcome.get()
    }

    /// Runs `render` once the pixels `data` will decode to fit in the
    /// configuration's decode memory limit, and gives them back after.
    /// Every render reserves here, watermarks, SVGs and animations
    /// included, so that no caller can skip it. The estimate comes from the
    /// header (an animation's is one frame's: frames are decoded one at a
    /// time), else it is the pixel limit's worth.
    private func withDecodeMemory<Output: Sendable>(
        for data: Data, decoding: DecodeStage, request: ImageRequest, _ render: () async -> Result<Output, ImagePipeline.Error>
    ) async -> Result<Output, ImagePipeline.Error> {
        guard let decodeMemory else { return await render() }
        // A TIFF's header gives the first page's size, not another's.
        let estimate =
            (request.page == 0 ? decoding.options.decodedBytesEstimate(of: data) : nil)
            ?? configuration.maximumPixelCount.multipliedReportingOverflow(by: 4).partialValue
        guard let reservation = await decodeMemory.acquire(weight: estimate, priority: request.priority) else {
            return .failure(.cancelled(key: request.url?.absoluteString ?? request.cacheKey))
        }
        defer { decodeMemory.release(reservation) }
        return await render()
    }

    /// Why decoding and processing produced no image.
    enum RenderFailure: Swift.Error {
        case decoding(ImageDecodingError)
        /// The identifier of the processor that returned no image.
        case processing(String)

        /// The pipeline's error for it, naming `key`.
        func error(key: String) -> ImagePipeline.Error {
            switch self {
            case .decoding(let error): .decodingFailed(key: key, underlying: error)
            case .processing(let processor): .processingFailed(key: key, processor: processor)
            }
        }
    }

    /// Decodes with the first decoder that handles the sniffed format, then
    /// scales to the output size.
    static func decode(_ data: Data, options: ImageDecodingOptions, decoders: [any ImageDecoding]) throws(ImageDecodingError) -> Image {
        let format = ImageFormat(sniffing: data)
        guard let decoder = decoders.first(where: { $0.canDecode(format) }) else {
            let seen = format == .unknown ? ImageFormat.describeUnrecognised(data) : "\(format), which no decoder handles"
            throw ImageDecodingError(code: .unsupportedFormat(seen: seen), format: format)
        }
        // Decoders that cannot scale exactly return a larger image.
        return options.scaled(try options.selectingPage(of: decoder.decode(data, options: options), format: format))
    }
}

extension Result where Failure == ImagePipeline.RenderFailure {
    /// Whether the data failed to decode (as opposed to a processor failing).
    var isDecodingFailure: Bool {
        if case .failure(.decoding) = self { return true }
        return false
    }
}
