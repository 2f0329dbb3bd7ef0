import Hummingbird

/// Counts every request into ``ServiceMetrics``: in flight, duration, and
/// answers by status (errors by the status they are answered with).
public struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics

    public init(_ metrics: ServiceMetrics) {
        self.metrics = metrics
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let end = metrics.begin()
        do {
            let response = try await next(request, context)
            end(response.status.code)
            return response
        } catch let error as any HTTPResponseError {
            end(error.status.code)
            throw error
        } catch {
            end(500)
            throw error
        }
    }
}
