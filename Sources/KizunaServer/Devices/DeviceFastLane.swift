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
/// unanswered, the lane passes the next ones on too. It sits behind ``ConnectionState`` (Hummingbird's
/// `HTTPConnectionStateHandler`'s duties), so the idle timeout and graceful shutdown see its requests and answers as
/// any other.
///
/// Most device requests never reach it: from a connection's second request on, ``DeviceByteLane`` answers them in
/// front of the parser. This lane answers what arrives behind a request passed on, and a connection's first request.
struct DeviceFastLane: Sendable {
    let devices: DeviceController
    let readiness: Readiness
    let metrics: RequestMetrics
    /// The server's logger, with the request id key that each request line replaces (see ``RequestLine``).
    let logger: Logger
    /// The server's logger as given, for what ``ConnectionState`` logs of a connection.
    let connectionLogger: Logger
    /// The largest body the lane holds.
    let bodyLimit: Int
    /// The `Server` header, as ``Hummingbird/ApplicationConfiguration/serverName`` gives the other answers.
    let serverName: String
    /// How long a connection may sit idle (``KizunaConfiguration/idleTimeout``), kept by ``ConnectionState``.
    let idleTimeout: TimeAmount?
    /// How many requests the lanes have answered (the others went their routes).
    let answered = Tally()
    /// How many of those ``DeviceByteLane`` answered, in front of the parser.
    let answeredFromBytes = Tally()

    /// A count shared by every connection's lane.
    final class Tally: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }

    init(
        devices: DeviceController, readiness: Readiness, metrics: RequestMetrics, logger: Logger, bodyLimit: Int, serverName: String,
        idleTimeout: TimeAmount?
    ) {
        self.devices = devices
        self.readiness = readiness
        self.metrics = metrics
        connectionLogger = logger
        var logger = logger
        logger[metadataKey: "hb.request.id"] = "-"
        self.logger = logger
        self.bodyLimit = min(bodyLimit, 16 << 10)
        self.serverName = serverName
        self.idleTimeout = idleTimeout
    }

    /// The handler to add with Hummingbird's HTTP handlers (they are added in front of `HTTPConnectionStateHandler`):
    /// at the connection's first request it puts the lane behind that handler and leaves.
    func installer() -> any RemovableChannelHandler {
        Installer(lane: self)
    }

    /// The byte lane for a new connection, to add in front of its HTTP parser.
    func byteLane() -> DeviceByteLane {
        DeviceByteLane(lane: self)
    }

    /// The endpoint and app `head` asks for, when the lane may take the request.
    func endpoint(of head: HTTPRequest) -> (DeviceController.Endpoint, String)? {
        guard head.method == .post, let path = head.path, readiness.isReady,
            head.headerFields[.origin] == nil, head.headerFields[.expect] == nil,
            head.headerFields[.connection].map({ !$0.lowercased().contains("close") }) ?? true
        else { return nil }
        return Self.endpoint(path: path.utf8)
    }

    /// The endpoint and app of a device request's `path` (`/v1/apps/{app}/<action>`, no query, the app not
    /// percent-encoded), or nil for any other path.
    static func endpoint(path: some Collection<UInt8>) -> (DeviceController.Endpoint, String)? {
        guard path.starts(with: "/v1/apps/".utf8) else { return nil }
        let rest = path.dropFirst(9)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")), slash != rest.startIndex,
            !rest[..<slash].contains(where: { $0 == UInt8(ascii: "%") })
        else { return nil }
        let action = rest[rest.index(after: slash)...]
        guard let endpoint = DeviceController.Endpoint.allCases.first(where: { $0.action.utf8.elementsEqual(action) }) else { return nil }
        return (endpoint, String(decoding: rest[..<slash], as: UTF8.self))
    }

    /// The headers of a lane's answer: the reply's, then what every answer carries, as the routes' answers have them.
    func headers(of reply: DeviceController.Reply, id: String) -> HTTPFields {
        var headers = reply.headers
        headers[.requestID] = id
        headers[.date] = HTTPDate.now
        headers[.server] = serverName
        return headers
    }

    /// The request log's line and the metrics of an answer a lane gave.
    func record(_ reply: DeviceController.Reply, endpoint: DeviceController.Endpoint, path: String, id: String, started: UInt64) {
        RequestLine(
            method: "POST", path: path, status: String(reply.status.code), route: endpoint.route, id: id,
            durationMilliseconds: EdgeMiddleware.milliseconds(since: started)
        ).log(to: logger)
        metrics.answered(reply.status, route: endpoint.route, method: .post, started: started)
        answered.add()
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
            context.write(wrapOutboundOut(.head(HTTPResponse(status: reply.status, headerFields: lane.headers(of: reply, id: id)))), promise: nil)
            if let body = reply.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            lane.record(reply, endpoint: held.endpoint, path: held.head.path ?? "", id: id, started: held.started)
        }
    }

    /// When the connection's first request arrives (the HTTP handlers are all in place by then), puts
    /// ``ConnectionState`` in the place of Hummingbird's `HTTPConnectionStateHandler`, and of the
    /// ``ParserErrorResponder`` and ``ExpectContinueResponder`` in front of it, a ``Handler`` behind it, and links the
    /// state to the connection's ``DeviceByteLane``; then leaves the pipeline.
    private final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart

        let lane: DeviceFastLane

        init(lane: DeviceFastLane) {
            self.lane = lane
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let pipeline = context.pipeline.syncOperations
            if let hummingbirds = try? pipeline.context(handlerType: HTTPConnectionStateHandler.self) {
                let state = ConnectionState(idleTimeout: lane.idleTimeout, logger: lane.connectionLogger)
                if (try? pipeline.addHandler(state, position: .after(hummingbirds.handler))) != nil {
                    pipeline.removeHandler(context: hummingbirds, promise: nil)
                    // Their work is the state's from here on; this request has been through them already.
                    if let parser = try? pipeline.context(handlerType: ParserErrorResponder.self) {
                        pipeline.removeHandler(context: parser, promise: nil)
                    }
                    if let expectations = try? pipeline.context(handlerType: ExpectContinueResponder.self) {
                        pipeline.removeHandler(context: expectations, promise: nil)
                    }
                    try? pipeline.addHandler(Handler(lane: lane), position: .after(state))
                    if let bytes = try? pipeline.handler(type: DeviceByteLane.self) {
                        DeviceByteLane.link(bytes, state)
                    }
                }
            }
            context.fireChannelRead(data)
            pipeline.removeHandler(context: context, promise: nil)
        }
    }
}

@available(*, unavailable)
extension DeviceFastLane.Handler: Sendable {}
