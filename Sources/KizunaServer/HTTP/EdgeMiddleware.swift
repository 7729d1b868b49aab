import Dispatch
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Every request's way in and out, in one middleware. Outside: the request metrics (``RequestMetrics``), the
/// `X-Request-ID` echo and one log line per request with its outcome. Inside: errors answered in the standard JSON
/// shape (``ErrorResponder``), 503 until the store is ready (``ReadinessGate``), and the body limit (``BodyLimit``).
///
/// One middleware rather than one per concern because each Hummingbird middleware layer is an `async` call through
/// two closures: about seven task switches per request, each taking the task's status-record lock to read its
/// executor preference (see ``EventLoopTaskExecutor``). Five layers were a tenth of `GET /health/live`'s CPU.
///
/// With cross-origin callers allowed, CORS sits between the two halves (``only(_:)`` ``Part/outside`` and
/// ``Part/inside``, two layers around ``AllowedOriginsMiddleware``), so error answers carry its headers too: a browser hides them otherwise.
struct EdgeMiddleware: RouterMiddleware {
    typealias Context = KizunaRequestContext

    /// Which half of the edge a layer runs.
    struct Part: OptionSet, Sendable {
        let rawValue: Int
        /// Metrics, the request id and the request log.
        static let outside = Part(rawValue: 1)
        /// Errors, readiness and the body limit.
        static let inside = Part(rawValue: 2)
        static let whole: Part = [.outside, .inside]
    }

    var part: Part = .whole
    let metrics: RequestMetrics
    let errors: ErrorResponder
    let readiness: ReadinessGate
    let bodyLimit: BodyLimit

    /// The same edge running only `part` of it.
    func only(_ part: Part) -> EdgeMiddleware {
        var edge = self
        edge.part = part
        return edge
    }

    // One function with one `await` on the way to the handler (two when a body is collected): every helper it calls is
    // synchronous, since each further async call would cost switches of its own.
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let outside = part.contains(.outside)
        let started = outside ? DispatchTime.now().uptimeNanoseconds : 0
        let active = outside ? metrics.begin(request.method) : nil
        var response: Response
        do {
            if !part.contains(.inside) {
                response = try await next(request, context)
            } else if let refusal = readiness.refusal(of: request) {
                response = refusal
            } else if try bodyLimit.collects(request) {
                var request = request
                var context = context
                do {
                    context.collectedBody = try await request.collectBody(upTo: bodyLimit.limit)
                } catch is NIOTooManyBytesError {
                    throw bodyLimit.tooLarge
                }
                response = try await next(request, context)
            } else {
                response = try await next(request, context)
            }
        } catch {
            guard part.contains(.inside) else {
                if let active { metrics.failed(error, route: context.endpointPath, method: request.method, active: active) }
                throw error
            }
            response = errors.response(to: error, request: request, context: context)
        }
        guard let active else { return response }
        let id = context.id
        let route = context.endpointPath  // read once: it sits behind a lock
        response.headers[.requestID] = id
        // Hummingbird closes the connection after this answer (see KeepAliveNormalizer); the client is told so.
        if request.headers[.connection] == "close" { response.headers[.connection] = "close" }
        RequestLine(
            method: request.method.rawValue, path: request.uri.path, status: String(response.status.code), route: route ?? "-",
            id: id, durationMilliseconds: Self.milliseconds(since: started)
        ).log(to: context.logger)
        return metrics.answered(response, route: route, method: request.method, started: started, active: active)
    }

    /// The time since `started` (`DispatchTime`'s uptime) as milliseconds with three decimals (`12.345`), in
    /// integers: `Double`'s description was a visible part of a request's cost.
    static func milliseconds(since started: UInt64) -> String {
        let microseconds = (DispatchTime.now().uptimeNanoseconds - started) / 1000
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
