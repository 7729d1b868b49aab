import Dispatch
import HTTPTypes
import Hummingbird
import Metrics
import Synchronization

/// Hummingbird's request metrics — `hb.requests`, `http.server.request.duration`, `hb.request.errors` and
/// `http.server.active_requests`, with the same labels — recorded by ``EdgeMiddleware`` without what Hummingbird's
/// `MetricsMiddleware` does to every answer: it wraps the body in a closure to time the write, which turns a one-buffer
/// answer (head, body and end in one socket write) into three writes, each a syscall and a TCP segment, and three
/// task switches. Here an answer is counted when the handler returns it, except a body of unknown length (an event
/// stream, a chunked answer), which is still wrapped so that it counts as active, and is timed, until it ends.
/// (`ResponseBody` does not say whether it is one buffer; a known length is the sign.)
///
/// The metric objects are made once per method and per (route, method, status): the factory's own lookup is slower.
final class RequestMetrics: Sendable {
    private struct EndpointID: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: HTTPResponse.Status
    }

    private struct Endpoint: Sendable {
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

    /// Counts a request as active; hand the meter back to ``answered(_:route:method:started:active:)`` or
    /// ``failed(_:route:method:active:)``.
    func begin(_ method: HTTPRequest.Method) -> Meter {
        let meter = methods.withLock { methods in
            if let meter = methods[method] { return meter }
            let meter = Meter(label: "http.server.active_requests", dimensions: [("http.request.method", method.description)])
            methods[method] = meter
            return meter
        }
        meter.increment()
        return meter
    }

    /// Records an answer: now if its length is known, when its body has been written otherwise.
    func answered(_ response: Response, route: String?, method: HTTPRequest.Method, started: UInt64, active: Meter) -> Response {
        let metrics = endpoint(.init(route: route ?? "Unknown", method: method, status: response.status))
        guard response.body.contentLength == nil else {
            metrics.record(since: started)
            active.decrement()
            return response
        }
        var response = response
        let body = response.body
        response.body = ResponseBody { writer in
            defer {
                metrics.record(since: started)
                active.decrement()
            }
            try await body.write(writer)
        }
        return response
    }

    /// Records an answer of known length given with `status` by ``DeviceFastLane``, which never reaches a middleware.
    /// Not counted as active: the lane answers in the same pass of the event loop that read the request's end.
    func answered(_ status: HTTPResponse.Status, route: String, method: HTTPRequest.Method, started: UInt64) {
        endpoint(.init(route: route, method: method, status: status)).record(since: started)
    }

    /// Records a request that ended in an error no middleware inside answered.
    func failed(_ error: any Error, route: String?, method: HTTPRequest.Method, active: Meter) {
        let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
        let metrics = endpoint(.init(route: route ?? "NotFound", method: method, status: status))
        metrics.counter.increment()
        metrics.errors.increment()
        active.decrement()
    }

    private func endpoint(_ id: EndpointID) -> Endpoint {
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
