import Foundation
import ImagoSandbox
import Testing

@testable import Imago

@MainActor
@Suite("ImageBinder: placeholder, synchronous memory hits, last request wins, unbinding", .timeLimit(.minutes(10)))
struct ImageBinderTests {
    let loader = MockDataLoader()
    let placeholder = MockImage.image(id: 0xFFFF)
    let failure = MockImage.image(id: 0xEEEE)

    func url(_ id: Int) -> URL { URL(string: "https://images.example/photo\(id)")! }

    @Test("placeholder at once, then the image, not marked as from memory")
    func placeholderThenImage() async throws {
        let pipeline = ImagePipeline.mock(loader: loader)
        let binder = ImageBinder(pipeline: pipeline, placeholder: placeholder)
        let display = RecordingDisplay()

        binder.bind(ImageRequest(url: url(1)), to: display)
        guard case .placeholder(let shown) = display.current else {
            Issue.record("expected the placeholder first")
            return
        }
        #expect(shown == placeholder)

        await waitUntilIdle(binder, [display])
        #expect(display.shownID == 1)
        guard case .image(_, let source) = display.current else { return }
        #expect(source == .network)
    }

    @Test("a memory hit is shown before bind returns, marked as from memory, with no placeholder")
    func synchronousHit() async throws {
        let pipeline = ImagePipeline.mock(loader: loader)
        _ = try await pipeline.image(for: url(2))
        let binder = ImageBinder(pipeline: pipeline, placeholder: placeholder)
        let display = RecordingDisplay()

        binder.bind(ImageRequest(url: url(2)), to: display)

        #expect(display.history.count == 1)
        #expect(display.shownID == 2)
        guard case .image(_, let source) = display.current else { return }
        #expect(source == .memory)
    }

    @Test("a failure shows the failure image with the error")
    func failureImage() async throws {
        let pipeline = ImagePipeline.mock(loader: loader)
        loader.setReply(.init(data: Data(), failure: .httpStatus(500)), for: url(3))
        let binder = ImageBinder(pipeline: pipeline, placeholder: placeholder, failureImage: failure)
        let display = RecordingDisplay()

        binder.bind(ImageRequest(url: url(3)), to: display)
        await waitUntilIdle(binder, [display])

        guard case .failure(let image, .httpStatus(500, _)) = display.current else {
            Issue.record("expected the failure image, got \(String(describing: display.current))")
            return
        }
        #expect(image == failure)
    }

    @Test("rebinding cancels the previous load, and its late result is never shown")
    func rebindCancels() async throws {
        let pipeline = ImagePipeline.mock(loader: loader)
        loader.pause()
        let binder = ImageBinder(pipeline: pipeline)
        let display = RecordingDisplay()
        binder.bind(ImageRequest(url: url(4)), to: display)
        let first = try #require(binder.task(for: display))

        binder.bind(ImageRequest(url: url(5)), to: display)
        loader.resume()
        await waitUntilIdle(binder, [display])

        #expect(first.isFinished)
        #expect(display.shownID == 5)
        #expect(!display.history.contains { if case .image(let image, _) = $0 { MockImage.id(of: image) == 4 } else { false } })
    }

    @Test("unbinding cancels the display's load, and nothing is shown on it afterwards")
    func unbindCancels() async throws {
        // Given a display whose load has reached the loader and is held there
        let pipeline = ImagePipeline.mock(loader: loader)
        loader.pause()
        let binder = ImageBinder(pipeline: pipeline, placeholder: placeholder, failureImage: failure)
        let display = RecordingDisplay()
        binder.bind(ImageRequest(url: url(6)), to: display)
        let task = try #require(binder.task(for: display))
        await loader.waitForStarts(1)

        // When the display is unbound (a cell about to be reused) and the loader lets go
        binder.unbind(display)
        #expect(binder.task(for: display) == nil)
        loader.resume()

        // Then the load ends cancelled, and the display still shows the placeholder alone
        guard case .failure(let error) = await task.result else {
            Issue.record("expected the load to be cancelled, it succeeded")
            return
        }
        #expect(error.isCancellation)
        await waitUntilIdle(binder, [display])
        #expect(display.history.count == 1)
        guard case .placeholder(let shown) = display.current else {
            Issue.record("expected the placeholder only, got \(String(describing: display.current))")
            return
        }
        #expect(shown == placeholder)
    }

    @Test("reuse storm: 1,000 displays rebound at random to 200 URLs answering out of order end on their last request")
    func reuseStorm() async throws {
        // Given 200 URLs whose responses take 0-500 ms
        var generator = SeededGenerator(seed: 2026)
        for id in 0..<200 {
            let delay = Duration.milliseconds(Int.random(in: 0...500, using: &generator))
            loader.setReply(.init(data: MockImage.data(id: UInt32(id)), delay: delay), for: url(id))
        }
        let pipeline = ImagePipeline.mock(loader: loader, downloads: 200, perHost: 200)
        let binder = ImageBinder(pipeline: pipeline, placeholder: placeholder)
        let displays = (0..<1000).map { _ in RecordingDisplay() }
        var last = [Int](repeating: -1, count: displays.count)

        // When displays are rebound at random over several rounds, yielding between rounds
        for _ in 0..<5 {
            for index in displays.indices where Int.random(in: 0..<3, using: &generator) != 0 {
                let id = Int.random(in: 0..<200, using: &generator)
                binder.bind(ImageRequest(url: url(id)), to: displays[index])
                last[index] = id
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...100, using: &generator)))
        }
        await waitUntilIdle(binder, displays)

        // Then each display shows the image of its last request
        for (index, display) in displays.enumerated() where last[index] >= 0 {
            #expect(display.shownID == UInt32(last[index]), "display \(index)")
        }

        // And rebinding to an image in memory shows it synchronously
        let display = displays[0]
        let id = last.first { $0 >= 0 } ?? 0
        binder.bind(ImageRequest(url: url(id)), to: display)
        #expect(display.shownID == UInt32(id))
        guard case .image(_, let source) = display.current else { return }
        #expect(source == .memory)
    }

    /// Waits until no display has a load in flight and the binder has shown every result.
    private func waitUntilIdle(_ binder: ImageBinder, _ displays: [RecordingDisplay]) async {
        while let pending = displays.lazy.compactMap({ binder.task(for: $0) }).first {
            _ = await pending.result
            await Task.yield()
        }
    }
}
