import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// An OpenTelemetry collector's OTLP/HTTP trace endpoint on loopback, for
/// the tests: it takes `POST /v1/traces` in protobuf, answers each with an
/// empty success, and keeps the spans it read.
final class OTLPReceiver: Sendable {
    /// What the tests look at in a span; the identifiers in hex, as in a `traceparent`.
    struct Span: Sendable, Equatable {
        var traceID: String
        var spanID: String
        var parentSpanID: String
        var name: String
    }

    /// The spans read so far.
    private final class Received: Sendable {
        let spans = Mutex<[Span]>([])
    }

    private let received = Received()
    private let arrived: AsyncStream<Void>
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    /// `http://127.0.0.1:PORT`, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    let endpoint: String

    init() async throws {
        let (arrived, arrivals) = AsyncStream.makeStream(of: Void.self)
        self.arrived = arrived
        let router = Router()
        router.post("v1/traces") { [received] request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            guard let spans = Self.spans(inExportRequest: Array(body.readableBytesView)[...]) else { return Response(status: .badRequest) }
            received.spans.withLock { $0 += spans }
            arrivals.yield()
            return Response(status: .ok, headers: [.contentType: "application/x-protobuf"])
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }, logger: Logger(label: "otlp-receiver"))
        group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "otlp-receiver")))
        running = Task { [group] in try await group.run() }
        var iterator = ports.makeAsyncIterator()
        endpoint = "http://127.0.0.1:\(await iterator.next() ?? 0)"
    }

    /// Waits until the spans received satisfy `done` (each export wakes it),
    /// and returns them; gives up after `guardTime`, a guard against a hang,
    /// with what it has.
    func spans(until done: @escaping @Sendable ([Span]) -> Bool, guardTime: Duration = .seconds(120)) async -> [Span] {
        let wait = Task { [arrived, received] in
            for await _ in arrived where done(received.spans.withLock { $0 }) { return }
        }
        let guarding = Task {
            try await Task.sleep(for: guardTime)
            wait.cancel()
        }
        if !done(received.spans.withLock { $0 }) { await wait.value }
        wait.cancel()
        guarding.cancel()
        return received.spans.withLock { $0 }
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }

    // MARK: Reading protobuf's wire format, for the few fields the tests need

    /// ExportTraceServiceRequest: resource_spans (1) → ResourceSpans:
    /// scope_spans (2) → ScopeSpans: spans (2) → Span: trace_id (1),
    /// span_id (2), parent_span_id (4), name (5). Nil if it does not parse.
    static func spans(inExportRequest bytes: ArraySlice<UInt8>) -> [Span]? {
        var found: [Span] = []
        guard let resources = fields(bytes) else { return nil }
        for case (1, let resource) in resources {
            guard let scopes = fields(resource) else { return nil }
            for case (2, let scope) in scopes {
                guard let entries = fields(scope) else { return nil }
                for case (2, let span) in entries {
                    guard let values = fields(span) else { return nil }
                    func value(_ number: Int) -> ArraySlice<UInt8> { values.first { $0.0 == number }?.1 ?? [] }
                    found.append(
                        Span(
                            traceID: hex(value(1)), spanID: hex(value(2)), parentSpanID: hex(value(4)),
                            name: String(decoding: value(5), as: UTF8.self)))
                }
            }
        }
        return found
    }

    /// The length-delimited fields of a message, by field number, in order;
    /// the others are skipped. Nil for a malformed message.
    static func fields(_ bytes: ArraySlice<UInt8>) -> [(Int, ArraySlice<UInt8>)]? {
        var index = bytes.startIndex
        var fields: [(Int, ArraySlice<UInt8>)] = []
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.endIndex, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        while index < bytes.endIndex {
            guard let key = varint() else { return nil }
            switch key & 7 {
            case 0: guard varint() != nil else { return nil }
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let length = varint(), length <= UInt64(bytes.endIndex - index) else { return nil }
                fields.append((Int(key >> 3), bytes[index..<(index + Int(length))]))
                index += Int(length)
            default: return nil
            }
            guard index <= bytes.endIndex else { return nil }
        }
        return fields
    }

    static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
