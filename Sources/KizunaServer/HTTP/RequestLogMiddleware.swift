import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Echoes the request id in `X-Request-ID` and logs one line per request with its outcome.
///
/// Hummingbird gives each request a logger carrying `hb.request.id`; every log line written through
/// `context.logger` while handling the request carries it too.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = KizunaRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[.requestID] = context.id
        let elapsed = ContinuousClock.now - started
        context.logger.info(
            "\(request.method) \(request.uri.path) \(response.status.code)",
            metadata: [
                "http.route": "\(context.endpointPath ?? "-")",
                "http.status": "\(response.status.code)",
                "duration_ms": "\(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)",
            ]
        )
        return response
    }
}
