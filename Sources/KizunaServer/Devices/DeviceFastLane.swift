import Dispatch
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// `config:fetch` and `gate:check` answered in the connection's channel pipeline, as the request's last part arrives,
/// when everything the answer needs is already in memory — the common case, and every app launch's.
///
/// Through Hummingbird, a request is handed to the connection's task, routed, passed through the edge middleware and
/// written back through an async writer: on these routes that was 30 % of the time a bare Hummingbird app takes to
/// serve the same bytes, most of it task switches, retain/release and the router (Benchmarks/RESULTS.md, issue 19).
/// The lane skips that path, not what it does: the answer comes from the same function as the route's
/// (``DeviceController/immediateReply(_:app:body:ifNoneMatch:)``), with the same headers (`X-Request-ID`, `Date`,
/// `Server`, `ETag`, 304 for `If-None-Match`), the same request log line and the same metrics.
///
/// Any request the lane is not sure of goes its ordinary way, unchanged: another route, a query, a percent-encoded app
/// id, an `Origin` (CORS), `Connection: close`, `Expect`, a body over 16 KiB or not in the SDK's plain shape, trailers,
/// a server not ready, a document not cached or older than the device knows, an install over its limit (the route
/// then answers 429; the limiter took nothing). Answers keep the requests' order: while a request passed on is
/// unanswered, the lane passes the next ones on too. It sits behind Hummingbird's `HTTPConnectionStateHandler`, so the
/// idle timeout and graceful shutdown see its requests and answers as any other.
struct DeviceFastLane: Sendable {
    let devices: DeviceController
    let readiness: Readiness
    let metrics: RequestMetrics
    /// The server's logger, with the request id key that each request line replaces (see ``RequestLine``).
    let logger: Logger
    /// The largest body the lane holds.
    let bodyLimit: Int
    /// The `Server` header, as ``Hummingbird/ApplicationConfiguration/serverName`` gives the other answers.
    let serverName: String
    /// How many requests the lane has answered (the others went their routes).
    let answered = Tally()

    /// A count shared by every connection's lane.
    final class Tally: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }

    init(devices: DeviceController, readiness: Readiness, metrics: RequestMetrics, logger: Logger, bodyLimit: Int, serverName: String) {
        self.devices = devices
        self.readiness = readiness
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "hb.request.id"] = "-"
        self.logger = logger
        self.bodyLimit = min(bodyLimit, 16 << 10)
        self.serverName = serverName
    }

    /// The handler to add with Hummingbird's HTTP handlers (they are added in front of `HTTPConnectionStateHandler`):
    /// at the connection's first request it puts the lane behind that handler and leaves.
    func installer() -> any RemovableChannelHandler {
        Installer(lane: self)
    }

    /// The endpoint and app `head` asks for, when the lane may take the request.
    func endpoint(of head: HTTPRequest) -> (DeviceController.Endpoint, String)? {
        guard head.method == .post, let path = head.path, path.utf8.starts(with: "/v1/apps/".utf8), readiness.isReady,
            head.headerFields[.origin] == nil, head.headerFields[.expect] == nil,
            head.headerFields[.connection].map({ !$0.lowercased().contains("close") }) ?? true
        else { return nil }
        let rest = path.utf8.dropFirst(9)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")), slash != rest.startIndex,
            !rest[..<slash].contains(where: { $0 == UInt8(ascii: "%") })
        else { return nil }
        let action = rest[rest.index(after: slash)...]
        guard let endpoint = DeviceController.Endpoint.allCases.first(where: { $0.action.utf8.elementsEqual(action) }) else { return nil }
        return (endpoint, String(Substring(rest[..<slash])))
    }

    /// The lane for one connection: it answers or passes on each request that arrives.
    final class Handler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        private struct Held {
            let head: HTTPRequest
            let endpoint: DeviceController.Endpoint
            let app: String
            let started: UInt64
            var body: ByteBuffer?
        }

        private enum State {
            /// Between requests.
            case waiting
            /// The current request goes its ordinary way.
            case passing
            /// The lane holds the current request until its end.
            case holding(Held)
        }

        private let lane: DeviceFastLane
        private var state = State.waiting
        /// Requests passed on whose answers have not ended.
        private var unanswered = 0

        init(lane: DeviceFastLane) {
            self.lane = lane
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch (state, unwrapInboundIn(data)) {
            case (.waiting, .head(let head)):
                if unanswered == 0, let (endpoint, app) = lane.endpoint(of: head) {
                    state = .holding(Held(head: head, endpoint: endpoint, app: app, started: DispatchTime.now().uptimeNanoseconds))
                } else {
                    pass(head, context: context)
                }
            case (.holding(var held), .body(var chunk)):
                state = .waiting  // the buffer is not shared while it grows
                if (held.body?.readableBytes ?? 0) + chunk.readableBytes > lane.bodyLimit {
                    release(held, context: context)
                    context.fireChannelRead(data)
                } else {
                    if held.body == nil { held.body = chunk } else { held.body!.writeBuffer(&chunk) }
                    state = .holding(held)
                }
            case (.holding(let held), .end(let trailers)):
                state = .waiting
                let body = held.body ?? ByteBuffer()
                if trailers == nil,
                    let reply = lane.devices.immediateReply(
                        held.endpoint, app: held.app, body: body, ifNoneMatch: held.head.headerFields[.ifNoneMatch])
                {
                    answer(held, with: reply, context: context)
                } else {
                    release(held, context: context)
                    context.fireChannelRead(data)
                    state = .waiting
                }
            case (_, .end):
                state = .waiting
                context.fireChannelRead(data)
            default:
                context.fireChannelRead(data)
            }
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data) { unanswered = max(0, unanswered - 1) }
            context.write(data, promise: promise)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A request cut short by a parser error is passed on as far as it came, for its route's error answer.
            if case .holding(let held) = state { release(held, context: context) }
            context.fireErrorCaught(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            state = .waiting
            context.fireChannelInactive()
        }

        private func pass(_ head: HTTPRequest, context: ChannelHandlerContext) {
            unanswered += 1
            state = .passing
            context.fireChannelRead(wrapInboundOut(.head(head)))
        }

        /// Passes on what the lane held of a request it will not answer.
        private func release(_ held: Held, context: ChannelHandlerContext) {
            pass(held.head, context: context)
            if let body = held.body { context.fireChannelRead(wrapInboundOut(.body(body))) }
        }

        private func answer(_ held: Held, with reply: DeviceController.Reply, context: ChannelHandlerContext) {
            let id = RequestID().description
            var headers = reply.headers
            headers[.requestID] = id
            headers[.date] = HTTPDate.now
            headers[.server] = lane.serverName
            context.write(wrapOutboundOut(.head(HTTPResponse(status: reply.status, headerFields: headers))), promise: nil)
            if let body = reply.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            let route = held.endpoint.route
            RequestLine(
                method: "POST", path: held.head.path ?? "", status: String(reply.status.code), route: route, id: id,
                durationMilliseconds: EdgeMiddleware.milliseconds(since: held.started)
            ).log(to: lane.logger)
            lane.metrics.answered(reply.status, route: route, method: .post, started: held.started)
            lane.answered.add()
        }
    }

    /// Puts a ``Handler`` behind `HTTPConnectionStateHandler` when the connection's first request arrives (the HTTP
    /// handlers are all in place by then), then leaves the pipeline.
    private final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart

        let lane: DeviceFastLane

        init(lane: DeviceFastLane) {
            self.lane = lane
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let pipeline = context.pipeline.syncOperations
            if let state = try? pipeline.context(handlerType: HTTPConnectionStateHandler.self) {
                try? pipeline.addHandler(Handler(lane: lane), position: .after(state.handler))
            }
            context.fireChannelRead(data)
            pipeline.removeHandler(context: context, promise: nil)
        }
    }
}

@available(*, unavailable)
extension DeviceFastLane.Handler: Sendable {}
