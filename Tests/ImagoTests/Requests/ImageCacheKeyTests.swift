import Foundation
import ImagoSandbox
import Testing

@testable import Imago

/// A processor that does nothing but carry an identifier, so that keys can
/// be built from identifiers holding any character.
private struct NamedProcessor: ImageProcessing {
    let identifier: String
    func process(_ image: Image) -> Image? { image }
}

@Suite("Cache keys: typed, computed once, never colliding")
struct ImageCacheKeyTests {
    let loader = MockDataLoader()
    let decoder = MockImageDecoder()

    @Test("a URL whose fragment spells a target size does not share the sized request's memory entry or fetch")
    func sizeSpelledInFragment() async throws {
        // Given a pipeline that has loaded photo7 at 100x100
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        let base = URL(string: "https://images.example/photo7")!
        let spelled = URL(string: "https://images.example/photo7#size=100x100")!
        let sized = ImageRequest(url: base, targetSize: ImageSize(width: 100, height: 100))
        _ = try await pipeline.image(for: sized)

        // When the URL that spells the size in its fragment is loaded with no size
        let plain = try await pipeline.image(for: ImageRequest(url: spelled))

        // Then it is loaded on its own, not served the sized request's entry
        #expect(plain.source == .network)
        #expect(loader.callCount(spelled) == 1)
        #expect(pipeline.cache.key(for: ImageRequest(url: spelled)) != pipeline.cache.key(for: sized))
    }

    @Test("a request without a processor cannot fill the processed variant's memory entry")
    func processorSpelledInFragment() async throws {
        // Given a pipeline that loaded a URL whose fragment spells a processor's identifier
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        let processor = MockImageProcessor(amount: 5)
        let spelled = URL(string: "https://images.example/photo7#\(processor.identifier)")!
        let unprocessed = try await pipeline.image(for: ImageRequest(url: spelled))
        #expect(MockImage.id(of: unprocessed.image) == 7)

        // When the plain URL is loaded with that processor
        let base = URL(string: "https://images.example/photo7")!
        let processed = try await pipeline.image(for: ImageRequest(url: base, processors: [processor]))

        // Then it gets the processed image, not the unprocessed one stored under a look-alike key
        #expect(processed.source == .network)
        #expect(processed.image.pixels == unprocessed.image.pixels.map { $0 &+ 5 })
        #expect(processor.callCount == 1)
    }

    @Test("two identical requests in flight still share one fetch")
    func identicalRequestsCoalesce() async throws {
        let pipeline = ImagePipeline.mock(loader: loader, decoder: decoder)
        let url = URL(string: "https://images.example/photo3#a|b=c,d")!
        loader.pause()
        let first = pipeline.imageTask(for: ImageRequest(url: url, targetSize: ImageSize(width: 4, height: 4)))
        let second = pipeline.imageTask(for: ImageRequest(url: url, targetSize: ImageSize(width: 4, height: 4)))
        await loader.waitForStarts(1)
        loader.resume()
        _ = try await (first.response, second.response)
        #expect(loader.callCount(url) == 1)
        #expect(pipeline.statistics.coalescedRequests == 1)
    }

    @Test("a request's key follows changes to its fields")
    func keyFollowsFields() {
        var request = ImageRequest(url: URL(string: "https://images.example/a.jpg")!)
        let original = request.imageKey
        #expect(original == ImageCacheKey("https://images.example/a.jpg"))
        request.targetSize = ImageSize(width: 10, height: 10)
        #expect(request.imageKey != original)
        let sized = request.imageKey
        request.contentMode = .fit
        #expect(request.imageKey != sized)
        request.targetSize = nil
        #expect(request.imageKey == original, "the content mode changes nothing without a target size")
        request.processors = [.grayscale]
        #expect(request.imageKey.processorIdentifiers == ["grayscale"])
        let processed = request.imageKey
        request.prefersEmbeddedThumbnail = true
        #expect(request.imageKey != processed && request.imageKey.isEmbeddedThumbnail)
        #expect(DiskKey.processedImage(request.imageKey) != DiskKey.processedImage(processed))
        let thumbnail = request.imageKey
        request.page = 2
        #expect(request.imageKey != thumbnail && request.imageKey.page == 2)
        #expect(DiskKey.processedImage(request.imageKey) != DiskKey.processedImage(thumbnail))
    }

    /// The fields that change the bytes of each kind of key.
    private struct Fields: Hashable {
        var dataKey: String
        var targetSize: ImageSize?
        var contentMode: ContentMode
        var identifiers: [String]
        var embeddedThumbnail: Bool
        var colorsAsStored: Bool
        var page: Int
        var networkPolicy: ImageRequest.NetworkPolicy

        var image: [AnyHashable] {
            [dataKey, targetSize, targetSize == nil ? nil : contentMode, identifiers, embeddedThumbnail, colorsAsStored, page]
        }
        var fetch: [AnyHashable] { image + [networkPolicy] }
        var data: [AnyHashable] { [dataKey, networkPolicy == .reload] }
    }

    @Test("property: two requests share a key exactly when every field that changes the bytes is equal")
    func keysAreInjective() {
        // Given random requests built from a small alphabet full of separators,
        // so that fields often spell each other's values
        var generator = SeededGenerator(seed: 13)
        let alphabet = Array("a#|=,:;0\u{0}")
        func text(_ maxLength: Int) -> String {
            String((0..<Int.random(in: 0...maxLength, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        let sizes: [ImageSize?] = [nil, ImageSize(width: 1, height: 1), ImageSize(width: 10, height: 1), ImageSize(width: 1, height: 10)]
        let policies: [ImageRequest.NetworkPolicy] = [.useCache, .reload, .cacheOnly, .revalidate]
        var samples: [(Fields, ImageRequest)] = []
        for _ in 0..<300 {
            let fields = Fields(
                dataKey: text(4),
                targetSize: sizes.randomElement(using: &generator)!,
                contentMode: Bool.random(using: &generator) ? .fill : .fit,
                identifiers: (0..<Int.random(in: 0...2, using: &generator)).map { _ in text(3) },
                embeddedThumbnail: Int.random(in: 0..<4, using: &generator) == 0,
                colorsAsStored: Int.random(in: 0..<4, using: &generator) == 0,
                page: [0, 0, 0, 1, 10].randomElement(using: &generator)!,
                networkPolicy: policies.randomElement(using: &generator)!
            )
            var request = ImageRequest(
                key: fields.dataKey, networkPolicy: fields.networkPolicy, targetSize: fields.targetSize,
                contentMode: fields.contentMode, processors: fields.identifiers.map(NamedProcessor.init)
            ) { Data() }
            request.prefersEmbeddedThumbnail = fields.embeddedThumbnail
            request.convertsToSRGB = !fields.colorsAsStored
            request.page = fields.page
            samples.append((fields, request))
        }

        // Then each key, and each string the disk tier stores under, is equal exactly when its fields are
        var equalImageKeys = 0
        var mismatches: [String] = []
        for (a, requestA) in samples {
            for (b, requestB) in samples {
                if (requestA.imageKey == requestB.imageKey) != (a.image == b.image) { mismatches.append("image: \(a) \(b)") }
                if (requestA.imageFetchKey == requestB.imageFetchKey) != (a.fetch == b.fetch) { mismatches.append("fetch: \(a) \(b)") }
                if (requestA.dataFetchKey == requestB.dataFetchKey) != (a.data == b.data) { mismatches.append("data: \(a) \(b)") }
                if requestA.imageKey == requestB.imageKey, requestA.imageKey.hashValue != requestB.imageKey.hashValue {
                    mismatches.append("hash: \(a) \(b)")
                }
                if a.image == b.image { equalImageKeys += 1 }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(equalImageKeys > samples.count, "the sample must hold distinct requests with equal fields")

        var owners: [[UInt8]: AnyHashable] = [:]
        for (fields, request) in samples {
            let stored: [(String, AnyHashable)] = [
                (DiskKey.data(fields.dataKey), ["data", fields.dataKey] as [AnyHashable]),
                (DiskKey.partialDownload(fields.dataKey), ["partial", fields.dataKey] as [AnyHashable]),
                (DiskKey.processedImage(request.imageKey), ["processed"] + fields.image as [AnyHashable]),
            ]
            for (key, owner) in stored {
                let previous = owners.updateValue(owner, forKey: Array(key.utf8))
                #expect(previous == nil || previous == owner, "\(key.debugDescription) names two entries")
            }
        }
    }
}
