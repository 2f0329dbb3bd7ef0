import ServiceContextModule
import Tracing

/// Child spans of the trace a caller is in, through the tracer bootstrapped
/// with swift-distributed-tracing (`InstrumentationSystem`). Outside a
/// trace (no ``ServiceContext/current``: no tracer, or tracing off) none is
/// started and the work runs as it is, so an untraced request pays one
/// task-local read.
package enum TraceSpans {
    /// Runs `body` in a span named `name`, a child of `context`; without a
    /// context, runs it alone. A failed `Result` is recorded on the span.
    package static func run<Value, Failure: Error>(
        _ name: String, in context: ServiceContext?, _ body: () -> Result<Value, Failure>
    ) -> Result<Value, Failure> {
        guard let context else { return body() }
        let span = InstrumentationSystem.tracer.startSpan(name, context: context)
        defer { span.end() }
        let outcome = body()
        if case .failure(let error) = outcome { span.recordError(error) }
        return outcome
    }

    /// Runs `body` in a span named `name`, a child of the current trace,
    /// with that span as the current context (so that spans `body` starts,
    /// AsyncHTTPClient's among them, are its children).
    package static func run<Value, Failure: Error>(
        _ name: String, _ body: () async throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        guard let context = ServiceContext.current else { return try await body() }
        let span = InstrumentationSystem.tracer.startSpan(name, context: context)
        defer { span.end() }
        let outcome = await within(span.context) { () async throws(Failure) -> Value in try await body() }
        if case .failure(let error) = outcome { span.recordError(error) }
        return try outcome.get()
    }

    /// Runs `body` with `context` as the current one: for work handed to a
    /// detached task, which does not inherit it.
    package static func within<Value, Failure: Error>(
        _ context: ServiceContext?, _ body: () async throws(Failure) -> Value
    ) async -> Result<Value, Failure> {
        await ServiceContext.$current.withValue(context) { () async -> Result<Value, Failure> in
            do throws(Failure) { return .success(try await body()) } catch { return .failure(error) }
        }
    }
}
