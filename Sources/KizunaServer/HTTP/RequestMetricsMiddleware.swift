import Dispatch
import HTTPTypes
import Hummingbird
import Metrics
import Synchronization

/// Hummingbird's request metrics — `hb.requests`, `http.server.request.duration`, `hb.request.errors` and
/// `http.server.active_requests`, with the same labels — without what its `MetricsMiddleware` does to every answer:
/// it wraps the body in a closure to time the write, which turns a one-buffer answer (head, body and end in one
/// socket write) into three writes, each a syscall and a TCP segment, and three task switches. Here an answer is
/// counted when the handler returns it, except a body of unknown length (an event stream, a chunked answer), which is
/// still wrapped so that it counts as active, and is timed, until it ends. (`ResponseBody` does not say whether it
/// is one buffer; a known length is the sign.)
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let cache = Cache()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let active = cache.active(request.method)
        active.increment()
        do {
            var response = try await next(request, context)
            let metrics = cache.endpoint(.init(route: context.endpointPath ?? "Unknown", method: request.method, status: response.status))
            if response.body.contentLength != nil {
                metrics.record(since: started)
                active.decrement()
            } else {
                let body = response.body
                response.body = ResponseBody { writer in
                    defer {
                        metrics.record(since: started)
                        active.decrement()
                    }
                    try await body.write(writer)
                }
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            let metrics = cache.endpoint(.init(route: context.endpointPath ?? "NotFound", method: request.method, status: status))
            metrics.counter.increment()
            metrics.errors.increment()
            active.decrement()
            throw error
        }
    }

    /// The metric objects per method and per (route, method, status), made once: the factory's own lookup is slower.
    private final class Cache: Sendable {
        struct EndpointID: Hashable {
            let route: String
            let method: HTTPRequest.Method
            let status: HTTPResponse.Status
        }

        struct Endpoint: Sendable {
            let counter: Counter
            let timer: Metrics.Timer
            let errors: Counter

            func record(since started: UInt64) {
                counter.increment()
                timer.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - started)
            }
        }

        private let methods = Mutex<[HTTPRequest.Method: Meter]>([:])
        private let endpoints = Mutex<[EndpointID: Endpoint]>([:])

        func active(_ method: HTTPRequest.Method) -> Meter {
            methods.withLock { methods in
                if let meter = methods[method] { return meter }
                let meter = Meter(label: "http.server.active_requests", dimensions: [("http.request.method", method.description)])
                methods[method] = meter
                return meter
            }
        }

        func endpoint(_ id: EndpointID) -> Endpoint {
            endpoints.withLock { endpoints in
                if let endpoint = endpoints[id] { return endpoint }
                let labels = [("http.route", id.route), ("http.request.method", id.method.description)]
                let endpoint = Endpoint(
                    counter: Counter(label: "hb.requests", dimensions: labels + [("http.response.status_code", id.status.code.description)]),
                    timer: Metrics.Timer(
                        label: "http.server.request.duration", dimensions: labels + [("http.response.status_code", id.status.code.description)],
                        preferredDisplayUnit: .seconds),
                    errors: Counter(label: "hb.request.errors", dimensions: labels + [("error.type", id.status.code.description)]))
                endpoints[id] = endpoint
                return endpoint
            }
        }
    }
}
