import Hummingbird

/// Refuses every method but GET and HEAD, on every path, with 405: the
/// service only reads.
public struct MethodsMiddleware<Context: RequestContext>: RouterMiddleware {
    let errorMaxAge: Int

    public init(errorMaxAge: Int) {
        self.errorMaxAge = errorMaxAge
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else { throw ServiceError.methodNotAllowed.cacheable(for: errorMaxAge) }
        return try await next(request, context)
    }
}
