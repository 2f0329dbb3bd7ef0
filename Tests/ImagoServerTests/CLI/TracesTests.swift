import Foundation
import HTTPTypes
import Imago
import ImagoSandbox
import Testing

#if IMAGO_OTEL
    private let otlpExporterBuilt = true
#else
    private let otlpExporterBuilt = false
#endif

/// `imago serve` with `OTEL_EXPORTER_OTLP_ENDPOINT` set, run as a process
/// (the tracer is the process's), exporting to a receiver on loopback. Not
/// in builds without the exporter (IMAGO_WITHOUT_OTEL, the ThreadSanitizer
/// run).
@Suite("Traces: OpenTelemetry spans over OTLP/HTTP", .enabled(if: otlpExporterBuilt))
struct TracesTests {
    static let traceparent = HTTPField.Name("traceparent")!

    @Test("a request continues the client's traceparent: its span, then source fetch, decode, transform, encode and store under it")
    func spansOfARequest() async throws {
        let (source, _) = try await ImageServiceOptionsTests.photoServer()
        let receiver = try await OTLPReceiver()
        let cache = TemporaryDirectory()
        let imago = try ChildProcess(
            "imago",
            arguments: [
                "serve", "--bind", "127.0.0.1:0", "--allow-unsigned", "--allow-source-network", "127.0.0.2/32", "--cache", cache.path,
            ],
            environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_SERVICE_NAME": "imago-test"])
        defer { imago.stop() }
        let listening = try await imago.line { $0.hasPrefix("imago serve: listening on ") }
        let base = try #require(URL(string: String(listening.dropFirst("imago serve: listening on ".count))))

        // When a client in a trace asks for a thumbnail
        let (traceID, parentID) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
        let path = ImageServiceOptionsTests.plain("w:50/f:png", source.url("/photo.jpg"))
        let answer = try await Patient.loader().loadData(
            for: DataRequest(
                url: try #require(URL(string: String(base.absoluteString.dropLast()) + path)),
                headers: [Self.traceparent: "00-\(traceID)-\(parentID)-01"])
        ) { _ in }
        #expect(answer.statusCode == 200)

        // Then the receiver gets the request's span, a child of the client's, and the steps under it
        let steps = ["source fetch", "decode", "transform", "encode", "store"]
        let spans = await receiver.spans { spans in
            let names = Set(spans.map(\.name))
            return spans.contains { $0.parentSpanID == parentID } && steps.allSatisfy(names.contains)
        }
        #expect(spans.allSatisfy { $0.traceID == traceID }, "\(spans)")
        let request = try #require(spans.first { $0.parentSpanID == parentID }, "\(spans)")
        for step in steps {
            #expect(spans.first { $0.name == step }?.parentSpanID == request.spanID, "\(step): \(spans)")
        }
        // And the request to the origin carries the trace on, as the source fetch's child
        let fetch = try #require(spans.first { $0.name == "source fetch" })
        let sent = try #require(source.lastRequest("/photo.jpg")?.headers[Self.traceparent])
        #expect(sent.hasPrefix("00-\(traceID)-\(fetch.spanID)-"), "\(sent)")
        try await receiver.stop()
        try await source.shutdown()
    }

    @Test("an OTLP transport imago is built without is refused at start, by name")
    func grpcRefused() async throws {
        let imago = try ChildProcess(
            "imago", arguments: ["serve", "--bind", "127.0.0.1:0"],
            environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"], readsErrors: true)
        let (output, status) = await imago.allOutput()
        #expect(status == .exited(64) && output.contains("OTEL_EXPORTER_OTLP_PROTOCOL") && output.contains("not grpc"), "\(status): \(output)")
    }

    @Test("the OTLP reader of the tests reads what protobuf writes, and refuses a truncated message")
    func protobufReading() {
        // ExportTraceServiceRequest { resource_spans { scope_spans { spans { trace_id, span_id, name, kind } } } }
        let span: [UInt8] = [0x0A, 2, 0xAB, 0xCD, 0x12, 1, 0x01, 0x2A, 1, 0x78, 0x30, 2]
        let scope: [UInt8] = [0x12, UInt8(span.count)] + span
        let resource: [UInt8] = [0x12, UInt8(scope.count)] + scope
        let request: [UInt8] = [0x0A, UInt8(resource.count)] + resource
        #expect(OTLPReceiver.spans(inExportRequest: request[...]) == [.init(traceID: "abcd", spanID: "01", parentSpanID: "", name: "x")])
        #expect(OTLPReceiver.spans(inExportRequest: request.dropLast(3)) == nil)
    }
}
