import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// A connection's HTTP state where the device lanes run, in place of Hummingbird's `HTTPConnectionStateHandler`, with
/// its duties unchanged — the idle timeout, and at shutdown closing once the answer in flight has been written — and
/// one more: it hears of the requests ``DeviceByteLane`` answers from the bytes, which Hummingbird's handler never
/// sees, so a connection busy with those is not closed as idle; and it tells the byte lane when an answer to a
/// request the lane passed on has been written, so the lane's own answers keep the requests' order.
///
/// Hummingbird's timing is kept: the timer starts when the connection does, and fires no earlier than the idle
/// timeout after the last request part read, answer ended, or byte-lane exchange; a connection whose request has been
/// read and is being answered is never idle.
///
/// It also does the work of the two handlers that otherwise sit in front of it, which leave the pipeline when it comes
/// in (``DeviceFastLane/installer()``): it answers a request the parser refuses (``ParserErrorResponder``, whose count
/// of requests in flight is this handler's own) and `Expect: 100-continue` (``ExpectContinueResponder``). Every
/// handler a request passes is a call per request part and answer part: `GET /health/live` 1.03× without these two.
final class ConnectionState: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let idleTimeout: TimeAmount?
    private let logger: Logger
    /// The byte lane in front of the parser, once linked (``DeviceByteLane/link(_:_:)``).
    var byteLane: DeviceByteLane?
    private var requestsInProgress = 0
    private var readingRequest = false
    private var lastActive = NIODeadline.now()
    private var closeAfterAnswer = false
    private var timer: Scheduled<Void>?
    /// Whether a request the parser refused has been answered.
    private var refused = false

    init(idleTimeout: TimeAmount?, logger: Logger) {
        self.idleTimeout = idleTimeout
        self.logger = logger
    }

    /// A request and its answer exchanged in front of the parser.
    func exchanged() {
        lastActive = .now()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { schedule(context, at: .now() + (idleTimeout ?? .zero)) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        byteLane?.unlink()
    }

    func channelActive(context: ChannelHandlerContext) {
        schedule(context, at: .now() + (idleTimeout ?? .zero))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Not passed on, as Hummingbird's handler does not: the async channel behind ends when the pipeline is torn down.
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActive = .now()
        switch unwrapInboundIn(data) {
        case .head(var head):
            readingRequest = true
            requestsInProgress += 1
            if ExpectContinueResponder.answer(&head, context: context) { return context.fireChannelRead(wrapInboundOut(.head(head))) }
        case .body: break
        case .end: readingRequest = false
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        ParserErrorResponder.handle(
            error, context: context, inFlight: requestsInProgress, bodyOpen: readingRequest, answered: &refused, logger: logger)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        requestsInProgress -= 1
        byteLane?.answerEnded()
        guard requestsInProgress == 0 else { return context.write(data, promise: promise) }
        if closeAfterAnswer {
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
            return
        }
        lastActive = .now()
        schedule(context, at: lastActive + (idleTimeout ?? .zero))
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Not passed on, as Hummingbird's handler does not.
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        if requestsInProgress > 0 {
            closeAfterAnswer = true
        } else {
            context.close(promise: nil)
        }
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        guard let idleTimeout, timer == nil, context.channel.isActive else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (state, context) = bound.value
            state.timer = nil
            // Read and being answered: the answer's end starts the timer again.
            if !state.readingRequest, state.requestsInProgress > 0 { return }
            let idleUntil = state.lastActive + idleTimeout
            if .now() >= idleUntil {
                context.close(promise: nil)
            } else {
                state.schedule(context, at: idleUntil)
            }
        }
    }
}

@available(*, unavailable)
extension ConnectionState: Sendable {}
