import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The console's Health page: the instance's readiness (a migration's progress while it runs) and the numbers of
/// `/metrics` that matter, read from the server's own `/health/ready` and `/metrics` routes.
///
/// It answers while the store is not ready — the readiness gate lets it through — and then needs no session: it shows
/// no more than `/health/ready` does to anyone (the console's sessions live in the store being migrated). Once the
/// store is ready it is a signed-in page like the others.
extension ConsoleController {
    func addHealthRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/health", use: healthPage)
    }

    @Sendable func healthPage(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        guard readiness.isReady else {
            var response = Self.html(ConsoleHealthPages.starting(Self.text(request), state: readiness.current), status: .serviceUnavailable)
            response.headers[.retryAfter] = "5"
            return response
        }
        return try await signedIn { request, context, session in
            let ready = try await api.call(.get, "/health/ready", as: session.token, context: context)
            let body = try? ready.decode(OperationsController.ReadyBody.self)
            let metrics = try await api.call(.get, "/metrics", as: session.token, context: context)
            let summary = MetricsSummary(exposition: String(decoding: metrics.body.readableBytesView, as: UTF8.self))
            let frame = Self.frame(request, session, section: .health)
            return Self.html(ConsoleHealthPages.health(frame, ready: body?.status ?? "unknown", summary: summary))
        }(request, context)
    }
}
