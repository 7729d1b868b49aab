import Foundation
import HummingbirdCore
import HummingbirdWebSocket
import KizunaCore
import Logging
import NIOCore
import NIOHTTP1

/// Kizuna's connections: HTTP/1.1 that may upgrade to a WebSocket (the data API's graphql-transport-ws), watched from
/// the moment they are accepted, as plain HTTP connections are.
///
/// `HTTP1WebSocketUpgradeChannel` adds a connection's HTTP handlers (the idle timeout, the additional handlers) only
/// once its first request has arrived and is not an upgrade. Alone it would leave the time before unwatched: a client
/// that sends nothing or half a header would hold its socket forever, a request the parser refuses would get no
/// answer, and upgraded connections would not count against ``KizunaConfiguration/maxConnections``. So each
/// connection gets the ``ConnectionLimiter``'s handler at the front of its pipeline when it is accepted, and a
/// ``FirstRequestGuard`` behind the upgrade handler until its first request or frame gets through, and a
/// ``KeepAliveNormalizer`` after the HTTP decoder; with the device lanes on, a ``DeviceByteLane`` goes in front of the
/// decoder.
///
/// Each connection also reads into a buffer of its own that NIO keeps for the connection's life and never shrinks: it
/// starts at ``initialReadBuffer`` bytes instead of NIO's 2 KiB, and grows (doubling, up to 64 KiB) only for a client
/// whose reads fill it. Requests and graphql-transport-ws messages are mostly a few hundred bytes, and an idle
/// WebSocket holds its buffer for hours: 10,000 of them hold 5 MB instead of 20.
struct UpgradableHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let upgrading: HTTP1WebSocketUpgradeChannel
    let limiter: ConnectionLimiter
    /// The device lanes, whose byte lane goes in front of the HTTP parser (``DeviceByteLane``).
    let deviceLane: DeviceFastLane?
    /// How long a connection may take to send its first request.
    let firstRequestTimeout: TimeAmount
    let logger: Logger

    /// The size of a connection's first read buffer, in bytes.
    static let initialReadBuffer = 512

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (upgrading, limiter, lane, timeout, guardLogger) = (self.upgrading, self.limiter, deviceLane, firstRequestTimeout, self.logger)
        return channel.eventLoop.makeCompletedFuture {
            // Set before the connection's first read, which allocates the buffer.
            let reads = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: Self.initialReadBuffer, maximum: 65536)
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: reads)
            try channel.pipeline.syncOperations.addHandlers(limiter.handler(), FlushCoalescer())
            if let lane { try channel.pipeline.syncOperations.addHandler(lane.byteLane()) }
        }.flatMap {
            upgrading.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            // Behind the upgrade handler, so it sees the first request once the upgrade decision let it through.
            try channel.pipeline.syncOperations.addHandler(FirstRequestGuard(timeout: timeout, logger: guardLogger))
            // Right after the decoder, where a request still has its HTTP version.
            let decoder = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(KeepAliveNormalizer(), position: .after(decoder.handler))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await upgrading.handle(value: value, logger: logger)
    }
}

/// Watches a connection until its first request (or, once upgraded, its first WebSocket frame) gets through, then
/// leaves its pipeline: the HTTP handlers added from then on, or the WebSocket's own keep-alive, take over.
///
/// Until then it closes a connection that has not sent a whole request head within the timeout (what Hummingbird's
/// idle timeout does on a plain HTTP connection), and answers a request the parser refuses with the standard JSON
/// error, as ``ParserErrorResponder`` does later in a connection's life.
final class FirstRequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    private let logger: Logger
    private var deadline: Scheduled<Void>?
    private var done = false

    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startWaiting(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startWaiting(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        stepAside(context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        stepAside(context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !done, let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        done = true
        deadline?.cancel()
        deadline = nil
        let (id, body) = ParserErrorResponder.refusal(error, logger: logger)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        headers.add(name: "X-Request-ID", value: id)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        // Closed once the answer is written: closing at once could drop it while the socket is busy.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in Self.endBeforeFirstRequest(bound.value) }
    }

    private func startWaiting(_ context: ChannelHandlerContext) {
        guard deadline == nil, !done else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = bound.value
            // Half a request head is not answered: the parser's error at the end of input is passed on, not turned
            // into a 400, as a plain HTTP connection's idle timeout closes it silently.
            handler.done = true
            Self.endBeforeFirstRequest(context)
        }
    }

    /// Closes a connection that never got a request through. The upgrade handler is told first that the input ended,
    /// which it answers by closing and ending its wait quietly; a connection simply closed under it would end the wait
    /// with an error, which Hummingbird logs as one for every idle or malformed connection.
    private static func endBeforeFirstRequest(_ context: ChannelHandlerContext) {
        context.pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        context.close(promise: nil)
    }

    private func stepAside(_ context: ChannelHandlerContext) {
        guard !done else { return }
        done = true
        deadline?.cancel()
        deadline = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

@available(*, unavailable)
extension FirstRequestGuard: Sendable {}
