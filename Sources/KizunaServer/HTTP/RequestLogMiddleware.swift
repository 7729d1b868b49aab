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
                "duration_ms": "\(Self.milliseconds(elapsed))",
            ]
        )
        return response
    }

    /// A duration as milliseconds with three decimals (`12.345`), in integers: `Double`'s description was a visible
    /// part of a request's cost.
    static func milliseconds(_ duration: Duration) -> String {
        let microseconds = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
