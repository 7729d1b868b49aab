import HTTPTypes
import Hummingbird
import KizunaCore

/// Answers 503 with `Retry-After` on every route but health and metrics until the store is ready (in ``EdgeMiddleware``).
struct ReadinessGate: Sendable {
    let readiness: Readiness
    /// Answered whatever the state: health, metrics, the API's description, and the console's Health page (which
    /// shows a migration's progress to a person) with its stylesheet.
    static let alwaysOpen = ["/health/live", "/health/ready", "/metrics", "/openapi.yaml", "/console/health", "/console/console.css"]

    /// The 503 answer for `request` while the server is not ready, or nil when the request may go on.
    func refusal(of request: Request) -> Response? {
        guard !readiness.isReady, !Self.alwaysOpen.contains(request.uri.path) else { return nil }
        let message: String
        switch readiness.current {
        case .migrating(let progress):
            message = "The server is migrating its store (step \(progress.step), \(progress.done)/\(progress.total)); retry shortly."
        case .failed: message = "The server could not start; see its log."
        default: message = "The server is starting; retry shortly."
        }
        return ErrorResponder.response(for: KizunaError(.unavailable, message), headers: [.retryAfter: "5"])
    }
}
