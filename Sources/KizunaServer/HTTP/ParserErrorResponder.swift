import Foundation
import HTTPTypes
import KizunaCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request the HTTP parser refuses outright — a bad method, a header past the size limit, garbage instead
/// of HTTP — with the standard JSON error (`400 bad_request`, a request id) and closes the connection, where
/// Hummingbird alone would send an empty 400.
///
/// It sits in each connection's pipeline after the HTTP codec. A parse error while a request is being handled (its
/// body broke off, say) is left to pass: the handler's body read fails and ``ErrorResponder`` answers it.
final class ParserErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let logger: Logger
    /// Requests whose answer has not been written to its end.
    private var requestsInFlight = 0
    /// A request whose body is still arriving (its answer may already be written: an early 413, say).
    private var bodyOpen = false
    private var answered = false

    init(logger: Logger) {
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            requestsInFlight += 1
            bodyOpen = true
        case .end: bodyOpen = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { requestsInFlight = max(0, requestsInFlight - 1) }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        if requestsInFlight > 0 { return context.fireErrorCaught(error) }  // the handler's body read fails and answers it
        guard !bodyOpen, !answered else {
            // The request was answered already and its body broke off afterwards: nothing more to say.
            context.close(promise: nil)
            return
        }
        answered = true
        let (id, body) = Self.refusal(error, logger: logger)
        let head = HTTPResponse(
            status: .badRequest,
            headerFields: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(body.count), .connection: "close",
                .requestID: id,
            ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        // Closed once the answer is written: closing at once could drop it while the socket is busy.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }

    /// What a request the parser refused is answered: a new request id (logged with the error) and the standard JSON
    /// error, `bad_request` with what was wrong.
    static func refusal(_ error: HTTPParserError, logger: Logger) -> (id: String, body: Data) {
        let id = hex(randomBytes(8))
        logger.info("HTTP request refused by the parser", metadata: ["error": "\(error)", "request.id": "\(id)"])
        let message =
            switch error {
            case .headerOverflow: "The request header is too large."
            case .invalidMethod: "The request method is not valid."
            default: "The request is not valid HTTP."
            }
        return (id, (try? JSONEncoder().encode(ErrorEnvelope(KizunaError(.badRequest, message)))) ?? Data())
    }
}

@available(*, unavailable)
extension ParserErrorResponder: Sendable {}
