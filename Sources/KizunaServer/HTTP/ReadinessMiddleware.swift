import HTTPTypes
import Hummingbird
import KizunaCore

/// Answers 503 with `Retry-After` on every route but health and metrics until the store is ready.
struct ReadinessMiddleware: RouterMiddleware {
    typealias Context = KizunaRequestContext
    let readiness: Readiness
    static let alwaysOpen = ["/health/live", "/health/ready", "/metrics", "/openapi.yaml"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !readiness.isReady, !Self.alwaysOpen.contains(request.uri.path) else {
            return try await next(request, context)
        }
        let message: String
        switch readiness.current {
        case .migrating(let progress):
            message = "The server is migrating its store (step \(progress.step), \(progress.done)/\(progress.total)); retry shortly."
        case .failed: message = "The server could not start; see its log."
        default: message = "The server is starting; retry shortly."
        }
        return ErrorMiddleware.response(for: KizunaError(.unavailable, message), headers: [.retryAfter: "5"])
    }
}
